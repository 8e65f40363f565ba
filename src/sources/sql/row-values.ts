import type { RowView } from '../csv/record-builders.js';

/**
 * Contract column values from typed values (a SQL row's fields, a module's record), as the text the
 * CSV validators check: the same rules for every source, one set of reasons for the user.
 */

const DATE_COLUMNS = new Set(['issuedDate', 'dueDate']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

const isDateParts = (v: object): v is { year: number; month: number; day: number } =>
  'year' in v && 'month' in v && 'day' in v;

/**
 * The text of a value for a contract column: trimmed strings; numbers as written by JS (an amount
 * should be a decimal string: `0.1 + 0.2` is refused, not rounded); a `Date` as `YYYY-MM-DD` (UTC)
 * for the document dates and ISO 8601 otherwise; `{year, month, day}` as `YYYY-MM-DD`; an array
 * (tags) joined with `|`; null and undefined as empty.
 */
export function textOf(value: unknown, column: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return String(value);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return 'Invalid Date';
    return DATE_COLUMNS.has(column) ? value.toISOString().slice(0, 10) : value.toISOString();
  }
  if (Array.isArray(value)) return value.map((v) => textOf(v, column)).join('|');
  if (typeof value === 'object' && isDateParts(value)) {
    return `${pad(Number(value.year), 4)}-${pad(Number(value.month))}-${pad(Number(value.day))}`;
  }
  return JSON.stringify(value);
}

/** A row view over a lookup of raw values by contract column. */
export const rowViewOf = (read: (column: string) => unknown): RowView => ({
  get: (column) => textOf(read(column), column),
});

const PG_TIMESTAMP_RE =
  /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Postgres prints a `timestamptz` as `2026-01-15 09:30:00.123456+00` (ISO DateStyle, UTC session):
 * this gives `2026-01-15T09:30:00.123Z`, what the API's `lastUpdate` and the validators expect.
 * A `timestamp` without time zone is taken as UTC. Anything else is returned as is (the validator
 * then says what is wrong with it).
 */
export function isoTimestamp(text: string): string {
  const m = PG_TIMESTAMP_RE.exec(text);
  if (!m) return text;
  const [, date, hm, seconds, fraction, zone] = m;
  let offset = zone ?? 'Z';
  if (offset !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    offset = `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4).padEnd(2, '0')}`;
  }
  const ms = (fraction ?? '').slice(0, 3).padEnd(3, '0');
  const parsed = new Date(`${date}T${hm}${seconds ?? ':00'}.${ms}${offset}`);
  return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString();
}

/** A tombstone flag: true, `t`, `true`, `1`, `yes`, `y` (any case); anything else is "not deleted". */
export function isTruthyFlag(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value === 'number') return value === 1;
  if (typeof value !== 'string') return false;
  return ['t', 'true', '1', 'yes', 'y'].includes(value.trim().toLowerCase());
}
