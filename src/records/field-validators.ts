import { SCALE } from '../domain/decimal.js';
import type { DateParts } from '../domain/records.js';
import { countryCodeOf } from './country-names.js';

/**
 * Checks of single CSV values. Each returns the parsed value, or a reason a person can act on
 * (quoting the value, saying what is expected). They never throw.
 */
export type Checked<T> = { ok: true; value: T } | { ok: false; reason: string };

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = (reason: string): Checked<never> => ({ ok: false, reason });

const isLeapYear = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

// These checks run on every row of files of a million rows: they read characters instead of
// matching regular expressions, so a valid value allocates nothing but its result.
const isDigitCode = (code: number): boolean => code >= 48 && code <= 57;

/** The number written by the digits at [start, end), or -1 when one is not a digit. */
function digitsAt(text: string, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    if (!isDigitCode(code)) return -1;
    value = value * 10 + (code - 48);
  }
  return value;
}

/** The parts of the date `dateProblemAt` last read (module state: it runs once per value, in line). */
const lastDate = { year: 0, month: 0, day: 0 };

/** Which way the `YYYY-MM-DD` at `start` is wrong, or null (its parts then in `lastDate`). */
function dateProblemAt(text: string, start: number): 'format' | 'calendar' | null {
  if (text.length < start + 10 || text[start + 4] !== '-' || text[start + 7] !== '-') return 'format';
  const year = digitsAt(text, start, start + 4);
  const month = digitsAt(text, start + 5, start + 7);
  const day = digitsAt(text, start + 8, start + 10);
  if (year < 0 || month < 0 || day < 0) return 'format';
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return 'calendar';
  lastDate.year = year;
  lastDate.month = month;
  lastDate.day = day;
  return null;
}

/** Reads `YYYY-MM-DD` at `start`: the parts, or which way it is wrong. */
function dateAt(text: string, start: number): DateParts | 'format' | 'calendar' {
  return dateProblemAt(text, start) ?? { year: lastDate.year, month: lastDate.month, day: lastDate.day };
}

/** `YYYY-MM-DD`, a real calendar date (2026-02-30 is refused). */
export function checkDate(text: string): Checked<DateParts> {
  const date = text.length === 10 ? dateAt(text, 0) : 'format';
  if (date === 'format') return fail(`not a date in the form YYYY-MM-DD: "${text}"`);
  if (date === 'calendar') return fail(`not a calendar date: "${text}"`);
  return ok(date);
}

/**
 * A plain decimal with a dot, as `isDecimal` of the domain accepts it: an optional sign, digits,
 * and at most SCALE fraction digits after a dot (`1234.50`, `-3`; never `12,50`, `1e3`, `.5`).
 */
export function isPlainDecimal(text: string): boolean {
  const n = text.length;
  let i = n > 0 && (text[0] === '+' || text[0] === '-') ? 1 : 0;
  const integerStart = i;
  while (i < n && isDigitCode(text.charCodeAt(i))) i++;
  if (i === integerStart) return false;
  if (i === n) return true;
  if (text[i] !== '.') return false;
  const fractionStart = ++i;
  while (i < n && isDigitCode(text.charCodeAt(i))) i++;
  return i === n && i > fractionStart && i - fractionStart <= SCALE;
}

/**
 * A decimal with a dot and at most 6 fraction digits: `1234.50`, `-3`. Never `12,50`, `1e3`.
 * Zeros past the 6th decimal are dropped (`1440.00000000`, a `DOUBLE(24,8)` or an 8-decimal
 * export): the amount is the same; other digits there are refused for their precision.
 */
export function checkAmount(text: string): Checked<string> {
  if (isPlainDecimal(text)) return ok(text);
  if (/^[+-]?\d+\.\d+$/.test(text)) {
    const [whole, fraction = ''] = text.split('.');
    const kept = fraction.replace(/0+$/, '').padEnd(2, '0');
    if (kept.length <= SCALE) return ok(`${whole}.${kept}`);
    const decimals = text.length - text.indexOf('.') - 1;
    return fail(
      `has ${decimals} decimals, more than the ${SCALE} kept (and the digits past them are not zeros): "${text}"`,
    );
  }
  return fail(`not an amount (a decimal with a dot, like 1234.50): "${text}"`);
}

const CURRENCY_RE = /^[A-Z]{3}$/;
const COUNTRY_RE = /^[A-Z]{2}$/;

/** ISO 4217: three letters, in any case (`eur` as Stripe writes it): given upper case. */
export function checkCurrency(text: string): Checked<string> {
  if (CURRENCY_RE.test(text)) return ok(text);
  const upper = text.toUpperCase();
  return CURRENCY_RE.test(upper) ? ok(upper) : fail(`not an ISO 4217 currency code (like EUR): "${text}"`);
}

/**
 * ISO 3166-1 alpha-2 in any case, or a country's name as exports write it (`Germany`,
 * `Deutschland`, `United Kingdom`, `France`): given as its alpha-2 code (see `countryCodeOf`).
 */
export function checkCountry(text: string): Checked<string> {
  // `UK` is two capitals but no ISO code (it is reserved for the United Kingdom: GB), as Xero writes it.
  if (COUNTRY_RE.test(text) && text !== 'UK') return ok(text);
  const code = countryCodeOf(text);
  return code !== null
    ? ok(code)
    : fail(`not an ISO 3166-1 alpha-2 country code (like FR) nor a country's name: "${text}"`);
}

/** `count` digits from `from` (none of them past the end). */
function digitRun(text: string, from: number, count: number): boolean {
  for (let i = from; i < from + count; i++) if (!isDigitCode(text.charCodeAt(i))) return false;
  return true;
}

/**
 * Whether `text` has the form
 * `^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$`, read
 * character by character (the expression, on every row of million-row files, cost more than the rest
 * of the check).
 */
export function hasTimestampShape(text: string): boolean {
  return timestampShape(text) !== NO_TIMESTAMP;
}

const NO_TIMESTAMP = -2;

/** `NO_TIMESTAMP`, or where the offset's sign sits in a timestamp of that form (-1: no offset). */
function timestampShape(text: string): number {
  const n = text.length;
  if (n < 10 || !digitRun(text, 0, 4) || text[4] !== '-' || !digitRun(text, 5, 2)) return NO_TIMESTAMP;
  if (text[7] !== '-' || !digitRun(text, 8, 2)) return NO_TIMESTAMP;
  if (n === 10) return -1;
  if ((text[10] !== 'T' && text[10] !== ' ') || !digitRun(text, 11, 2) || text[13] !== ':')
    return NO_TIMESTAMP;
  if (!digitRun(text, 14, 2)) return NO_TIMESTAMP;
  let at = 16;
  if (text[at] === ':') {
    if (!digitRun(text, at + 1, 2)) return NO_TIMESTAMP;
    at += 3;
    if (text[at] === '.') {
      const digits = at + 1;
      at = digits;
      while (at < n && at - digits < 9 && isDigitCode(text.charCodeAt(at))) at++;
      if (at === digits) return NO_TIMESTAMP;
    }
  }
  if (at === n) return -1;
  if (text[at] === 'Z') return at + 1 === n ? -1 : NO_TIMESTAMP;
  const sign = at;
  if ((text[at] !== '+' && text[at] !== '-') || !digitRun(text, at + 1, 2)) return NO_TIMESTAMP;
  at += 3;
  if (text[at] === ':') at++;
  return at + 2 === n && digitRun(text, at, 2) ? sign : NO_TIMESTAMP;
}

/** Hours, minutes, seconds and offset (its sign at `sign`, -1 for none) within range, once `timestampShape` fixed where they sit. */
function timeInRange(text: string, sign: number): boolean {
  if (text.length === 10) return true;
  if (digitsAt(text, 11, 13) > 23 || digitsAt(text, 14, 16) > 59) return false;
  if (text[16] === ':' && digitsAt(text, 17, 19) > 59) return false;
  if (sign < 0) return true;
  return digitsAt(text, sign + 1, sign + 3) <= 23 && digitsAt(text, text.length - 2, text.length) <= 59;
}

/**
 * ISO 8601 date or date-time: `2026-01-15`, `2026-01-15T09:30:00Z`, `2026-01-15T09:30:00.123+01:00`.
 * Kept as written: the value is compared, never re-interpreted in a local time zone.
 */
export function checkTimestamp(text: string): Checked<string> {
  const sign = timestampShape(text);
  if (sign !== NO_TIMESTAMP && dateProblemAt(text, 0) === null && timeInRange(text, sign)) return ok(text);
  return fail(`not an ISO 8601 date-time (like 2026-01-15T09:30:00Z): "${text}"`);
}

/** Tag names separated by `|`; blanks dropped, duplicates kept once, order kept. */
export function parseTags(text: string): string[] {
  if (text === '') return [];
  const tags = new Set<string>();
  for (const part of text.split('|')) {
    const tag = part.trim();
    if (tag !== '') tags.add(tag);
  }
  return [...tags];
}

/** -1, 0 or 1: the sign of a plain decimal's value (`-0.00` is 0). */
function signOf(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 49 && code <= 57) return text[0] === '-' ? -1 : 1;
  }
  return 0;
}

/** The integer digits of a plain decimal without sign or leading zeros, and its fraction digits. */
function partsOf(text: string): [whole: string, fraction: string] {
  let start = text[0] === '-' || text[0] === '+' ? 1 : 0;
  const dot = text.indexOf('.');
  const end = dot === -1 ? text.length : dot;
  while (start < end - 1 && text.charCodeAt(start) === 48) start++;
  return [text.slice(start, end), dot === -1 ? '' : text.slice(dot + 1)];
}

/**
 * Compares two plain decimals (as `isPlainDecimal` accepts them) by value: negative, 0 or
 * positive, as `parseDecimal(a) - parseDecimal(b)` would be, by reading digits instead of making
 * bigints (it runs on every paid row of million-row files).
 */
export function compareAmounts(a: string, b: string): number {
  const sign = signOf(a);
  const other = signOf(b);
  if (sign !== other) return sign < other ? -1 : 1;
  if (sign === 0) return 0;
  const [wholeA, fractionA] = partsOf(a);
  const [wholeB, fractionB] = partsOf(b);
  let order = wholeA.length - wholeB.length;
  if (order === 0) order = wholeA < wholeB ? -1 : wholeA > wholeB ? 1 : 0;
  if (order === 0) {
    const width = Math.max(fractionA.length, fractionB.length);
    const padA = fractionA.padEnd(width, '0');
    const padB = fractionB.padEnd(width, '0');
    order = padA < padB ? -1 : padA > padB ? 1 : 0;
  }
  if (order === 0) return 0;
  return order < 0 === sign > 0 ? -1 : 1;
}
