/**
 * One page of a cursor list: validate `first` / `sortBy` / `sortOrder` / `filters` / `after`,
 * filter, order, slice, project. Order of validation: first, sort, filters, then the cursor,
 * because the cursor is checked against the fingerprint of the other three.
 */

import { ApiError } from '../errors.js';
import { type CursorMode, encodeCursor, listFingerprint, resolveAfter } from './cursor.js';
import { matchesAll, parseFilters } from './filter-language.js';
import type { Condition, ListDefinition, ListQuery, Page, SortSpec } from './types.js';

export const MIN_PAGE_SIZE = 1;
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 20;

const INTEGER_RE = /^\d+$/;

/** `first` as an integer 1..100, or undefined when absent; anything else is 400 BAD_PAGINATION. */
export function parseFirst(raw: string | number | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = typeof raw === 'number' ? raw : INTEGER_RE.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(value) || value < MIN_PAGE_SIZE || value > MAX_PAGE_SIZE) {
    throw new ApiError(
      400,
      'BAD_PAGINATION',
      `first must be an integer from ${MIN_PAGE_SIZE} to ${MAX_PAGE_SIZE}, got "${String(raw)}"`,
    );
  }
  return value;
}

/**
 * The sort of the call, or null when neither `sortBy` nor `sortOrder` is given.
 * `sortOrder` alone sorts by the default key in that order; both count as "sorted" for cursors.
 */
export function parseSort<T>(def: ListDefinition<T>, query: ListQuery): SortSpec | null {
  const { sortBy, sortOrder } = query;
  if (sortBy === undefined && sortOrder === undefined) return null;
  if (!def.sorts) throw new ApiError(400, 'BAD_REQUEST', `${def.endpoint} cannot be sorted`);
  if (sortBy !== undefined && !Object.hasOwn(def.sorts, sortBy)) {
    const accepted = Object.keys(def.sorts).join(', ');
    throw new ApiError(400, 'BAD_REQUEST', `sortBy "${sortBy}" is not accepted; accepted: ${accepted}`);
  }
  if (sortOrder !== undefined && sortOrder !== 'asc' && sortOrder !== 'desc') {
    throw new ApiError(400, 'BAD_REQUEST', `sortOrder must be asc or desc, got "${sortOrder}"`);
  }
  return { sortBy: sortBy ?? null, sortOrder: sortOrder ?? 'asc' };
}

/**
 * The cursor mode of a call. Conditioned calls (filters or sort) and every call of a
 * non-historical list get v2 cursors; plain calls of historical lists keep the historical format.
 */
export function cursorModeOf<T>(
  def: ListDefinition<T>,
  conditions: readonly Condition[],
  sort: SortSpec | null,
): CursorMode {
  const conditioned = conditions.length > 0 || sort !== null;
  if (def.historical && !conditioned) return { format: 'historical', endpoint: def.endpoint };
  return { format: 'v2', fingerprint: listFingerprint(def.endpoint, conditions, sort) };
}

/** Serves one page of `items` (the whole, unfiltered collection in any order). */
export function listPage<T, R>(
  def: ListDefinition<T>,
  items: readonly T[],
  query: ListQuery,
  project: (item: T) => R,
): Page<R> {
  const first = parseFirst(query.first);
  const sort = parseSort(def, query);
  const conditions = parseFilters(query.filters ?? '', def.filters);
  const mode = cursorModeOf(def, conditions, sort);
  const offset = resolveAfter(query.after, mode);
  // A plain call of a historical list keeps its unbounded streaming: no `first` = everything left.
  const size = first ?? (mode.format === 'historical' ? Number.POSITIVE_INFINITY : DEFAULT_PAGE_SIZE);
  const selected = orderItems(
    def,
    items.filter((item) => matchesAll(item, conditions, def.filters)),
    sort,
  );
  const nodes = selected.slice(offset, offset + size);
  // endCursor is set on every non-empty page, even the last: only an empty page stops a client.
  const endCursor = nodes.length > 0 ? encodeCursor(mode, offset + nodes.length) : null;
  return { nodes: nodes.map(project), pageInfo: { endCursor } };
}

/** Sorts a copy: by the sort key (reversed for desc), ties broken by the default order ascending. */
function orderItems<T>(def: ListDefinition<T>, items: T[], sort: SortSpec | null): T[] {
  if (sort === null) return items.sort(def.defaultOrder);
  const key = sort.sortBy === null ? def.defaultOrder : def.sorts?.[sort.sortBy];
  if (!key) throw new Error(`sortBy "${sort.sortBy}" vanished from ${def.endpoint}`);
  const direction = sort.sortOrder === 'desc' ? -1 : 1;
  return items.sort((a, b) => direction * key(a, b) || def.defaultOrder(a, b));
}
