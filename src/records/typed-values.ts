import { isoDateOf } from '../domain/records.js';
import type { RowView } from './record-builders.js';

/**
 * Contract column values from typed values (a SQL row's fields, a module's record), as the text the
 * CSV validators check: the same rules for every source, one set of reasons for the user.
 */

const DATE_COLUMNS = new Set(['issuedDate', 'dueDate']);

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
    return isoDateOf({ year: Number(value.year), month: Number(value.month), day: Number(value.day) });
  }
  return JSON.stringify(value);
}

/** A row view over a lookup of raw values by contract column. */
export const rowViewOf = (read: (column: string) => unknown): RowView => ({
  get: (column) => textOf(read(column), column),
});
