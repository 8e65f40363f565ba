/** The list contract of the sandbox: filters, sorts and cursor pagination. */

export {
  type CursorMode,
  cursorInvalid,
  type DecodedCursor,
  decodeCursor,
  encodeCursor,
  encodeHistoricalCursor,
  encodeV2Cursor,
  listFingerprint,
  resolveAfter,
} from './cursor.js';
export {
  conditionsFingerprintInput,
  filterInvalid,
  MAX_CONDITIONS,
  MAX_FILTERS_LENGTH,
  MAX_VALUE_LENGTH,
  MAX_VALUES_PER_CONDITION,
  matchesAll,
  parseFilters,
} from './filter-language.js';
export { foldText, isCalendarDate } from './filter-values.js';
export {
  cursorModeOf,
  DEFAULT_PAGE_SIZE,
  listPage,
  MAX_PAGE_SIZE,
  MIN_PAGE_SIZE,
  parseFirst,
  parseSort,
} from './list-page.js';
export type * from './types.js';
