import { dateFns } from '../../domain/date-patterns.js';
import { type DateParts, isoDateOf } from '../../domain/records.js';
import type { Checked } from '../../records/field-validators.js';

/**
 * Document dates as an export writes them (`12.01.2026`, `1/19/2026`, `2026-01-19 14:03`), read
 * with a Unicode date pattern (date-fns `parse`), into year/month/day parts. A time part after the
 * date is allowed and ignored (the date counts, as written: no time zone is applied).
 */
export const CONTRACT_DATE_FORMAT = 'yyyy-MM-dd';

/** Distinct date texts remembered per reader: a date column holds few (a year has 365). */
const MEMO_LIMIT = 20_000;
/** A date-fns token of the time of day or of a time zone: where a pattern's date part ends. */
const TIME_TOKENS = /[HhKkmsSaBbXxOzt]/;
/** A reference date for date-fns: only its century matters, for two-digit years (`yy`). */
const REFERENCE = new Date(2000, 0, 1);

/** Reads a date text of a pattern into its parts, or says why it is none. */
export interface DateReader {
  (text: string): Checked<DateParts>;
  /**
   * The date in the contract's text (`2026-01-12` for `12.01.2026`), or null when `text` is no
   * date of the pattern (the reader itself then says why).
   */
  contractText(text: string): string | null;
}

/** A date text read once: its parts (or why it is none), and its contract text (null when none). */
interface ReadDate {
  checked: Checked<DateParts>;
  contractText: string | null;
}

/**
 * A reader of `pattern` (a Unicode date pattern as date-fns knows it: `dd.MM.yyyy`, `M/d/yyyy`,
 * `yyyy-MM-dd HH:mm:ss`...). Results are remembered by text, so a million rows parse each distinct
 * date once, and look each one up once whether its parts or its contract text are asked for.
 *
 * @example dateReader('dd.MM.yyyy')('12.01.2026') // { ok: true, value: { year: 2026, month: 1, day: 12 } }
 * @example dateReader('dd.MM.yyyy').contractText('12.01.2026') // '2026-01-12'
 */
export function dateReader(pattern: string): DateReader {
  const memo = new Map<string, ReadDate>();
  const datePattern = datePartOf(pattern);
  const look = (text: string): ReadDate => {
    let known = memo.get(text);
    if (known === undefined) {
      const checked = readDate(text, pattern, datePattern);
      known = { checked, contractText: checked.ok ? isoDateOf(checked.value) : null };
      if (memo.size >= MEMO_LIMIT) memo.clear();
      memo.set(text, known);
    }
    return known;
  };
  return Object.assign((text: string) => look(text).checked, {
    contractText: (text: string) => look(text).contractText,
  });
}

/**
 * Reads the date part of `text` with the date part of the pattern: the time, and any time zone
 * with it, never moves the date (`2026-01-19T23:30-05:00` is the 19th, wherever this runs).
 */
function readDate(text: string, pattern: string, datePattern: string): Checked<DateParts> {
  const refused: Checked<DateParts> = {
    ok: false,
    reason: `not a date in the form ${pattern} (format.dateFormat): "${text}"`,
  };
  const datePart = withoutTime(text);
  if (datePart === null) return refused;
  const { parse, isValid } = dateFns();
  const parsed = parse(datePart, datePattern, REFERENCE);
  if (!isValid(parsed)) return refused;
  const year = parsed.getFullYear();
  // date-fns reads `yyyy` from 1 to 4 digits: `19.01.26` is no year 26 but a short year.
  if (year > 9999 || (/yyyy/.test(datePattern) && year < 1000) || year < 1) return refused;
  return { ok: true, value: { year, month: parsed.getMonth() + 1, day: parsed.getDate() } };
}

/** The pattern up to its first time token (`yyyy-MM-dd'T'HH:mm:ssXXX` -> `yyyy-MM-dd`). */
export function datePartOf(pattern: string): string {
  let quoted = false;
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === "'") quoted = !quoted;
    else if (!quoted && TIME_TOKENS.test(char)) return trimEnd(pattern.slice(0, i));
  }
  return pattern;
}

/** Drops the separators and quoted literals a date part ends with before its time. */
const trimEnd = (part: string): string => part.replace(/(?:'[^']*'|[\s,T@-])+$/u, '');

/**
 * The date part of `2026-01-19 14:03`, `19/01/2026 2:03 PM` or `2026-01-19T14:03:00Z`: the text
 * before a space or a `T` that a time (`H:mm`) follows; the text itself when it has no time part;
 * null when what follows is not a time.
 */
export function withoutTime(text: string): string | null {
  const match = /^(.*?\d)(?:[ T]+)(\d{1,2}:\d{2}.*)$/.exec(text);
  if (match) return match[1]!;
  return /[ T]\d/.test(text) && /\d:\d/.test(text) ? null : text;
}
