/** Value helpers shared by the filter parser and the matcher. */

import { compareDecimal } from '../../domain/decimal.js';
import type { FilterField } from './types.js';

const COMBINING_MARKS = /\p{M}/gu;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_PREFIX_RE = /^(\d{4}-\d{2}-\d{2})(?:T.*)?$/;

/** Folds text so comparisons ignore case and accents: `Élodie` and `elodie` fold alike. */
export function foldText(text: string): string {
  return text.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase();
}

/** True for a real calendar day written `YYYY-MM-DD` (`2024-02-30` is refused). */
export function isCalendarDate(text: string): boolean {
  const m = DATE_RE.exec(text);
  if (!m) return false;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/**
 * The day of an item's date value, which may be `YYYY-MM-DD` or a full ISO datetime.
 * The date part is taken as written, so a datetime keeps the day of its own offset.
 */
export function dayOf(value: string, fieldName: string): string {
  const m = DATE_PREFIX_RE.exec(value);
  if (!m) throw new TypeError(`filter field "${fieldName}" produced a non-date value "${value}"`);
  return m[1]!;
}

/** The user-facing length of a value: code points, so an accent or emoji counts as one character. */
export const characterCount = (text: string): number => [...text].length;

/**
 * Compares an item value with a filter value of the same field, by the field's kind:
 * exact decimals for numbers, whole days for dates, folded text unless case-sensitive.
 * Only the sign of the result is meaningful.
 */
export function compareByKind<T>(field: FilterField<T>, fieldName: string, item: string, filter: string) {
  switch (field.kind) {
    case 'number':
      return compareDecimal(item, filter);
    case 'date':
      return compareStrings(dayOf(item, fieldName), filter);
    default:
      return compareStrings(textKey(field, item), textKey(field, filter));
  }
}

/** The comparison key of a text-like value: enums and case-sensitive fields compare as written. */
export function textKey<T>(field: FilterField<T>, text: string): string {
  return field.caseSensitive || field.kind === 'enum' ? text : foldText(text);
}

/** Code-unit order: deterministic, unlike localeCompare; `YYYY-MM-DD` days sort correctly with it. */
export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
