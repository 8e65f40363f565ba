import type { Checked } from '../../records/field-validators.js';

/**
 * Amounts as an export writes them (`1.440,00`, `"1,250.00"`, `(180.50)`, `1'440.00`, `125000`
 * in cents), turned into the contract's plain decimal with a dot (`1440.00`) before the record is
 * checked. Only the text is rewritten: the value is never a JS number.
 */
export interface NumberFormat {
  decimalSeparator: '.' | ',';
  /** '' when the file groups no thousands. */
  thousandsSeparator: '' | ',' | '.' | ' ' | "'";
  /** Amounts are integers in minor units (cents): this many decimals; null when not. */
  minorUnits: number | null;
}

const ok = <T>(value: T): Checked<T> => ({ ok: true, value });
const fail = (reason: string): Checked<never> => ({ ok: false, reason });

/** Spaces a spreadsheet may group thousands with: a space, a no-break space, a narrow one. */
const SPACES = new Set([' ', '\u00a0', '\u202f']);

/** `1.234,56` for the format, as the reason of a refusal words the expected form. */
export function exampleOf(format: NumberFormat): string {
  if (format.minorUnits !== null) return `an integer in minor units, like ${123456} for 1234.56`;
  const thousands = format.thousandsSeparator === '' ? '' : format.thousandsSeparator;
  return `1${thousands}234${format.decimalSeparator}56`;
}

/** Whether the format is the contract's own (a dot, no grouping): the amount needs no rewriting. */
export const isPlainFormat = (format: NumberFormat): boolean =>
  format.decimalSeparator === '.' && format.thousandsSeparator === '' && format.minorUnits === null;

/**
 * The amount `text` (trimmed, not empty) in the contract's form, or why it cannot be read in this
 * format, with the form expected and, when the other decimal separator would read it, that hint.
 */
export function plainAmount(text: string, format: NumberFormat): Checked<string> {
  const quick = quickPlainAmount(text, format);
  if (quick !== null) return ok(quick);
  const signed = signOf(text);
  if (signed === null) return refusal(text, format);
  const { negative, body } = signed;
  const plain =
    format.minorUnits !== null ? fromMinorUnits(body, format.minorUnits) : fromGrouped(body, format);
  if (plain === null) return refusal(text, format);
  return ok(negative && !/^[0.]+$/.test(plain) ? `-${plain}` : plain);
}

/**
 * The amount in the contract's form when it has one of the common forms (`-`, digits grouped by
 * three, a fraction), as `plainAmount` gives it; null when only `plainAmount`'s full reading can
 * tell (other signs, spaces, wrong groupings, minor units, or no amount at all). For the rows of
 * large files: it makes no result object.
 */
export function quickPlainAmount(text: string, format: NumberFormat): string | null {
  if (format.minorUnits !== null) return null;
  const quick = quickPlain(text, format.decimalSeparator, format.thousandsSeparator);
  if (quick === null) return null;
  // `-0,00` is no negative amount.
  return quick.startsWith('-') && /^-[0.]+$/.test(quick) ? quick.slice(1) : quick;
}

function refusal(text: string, format: NumberFormat): Checked<never> {
  const reason = `not an amount in the form ${exampleOf(format)}: "${text}"`;
  if (format.minorUnits !== null) return fail(reason);
  const other: NumberFormat = {
    decimalSeparator: format.decimalSeparator === '.' ? ',' : '.',
    thousandsSeparator: format.decimalSeparator === '.' ? '.' : ',',
    minorUnits: null,
  };
  const signed = signOf(text);
  if (signed !== null && fromGrouped(signed.body, other) !== null)
    return fail(
      `${reason} (it reads with "${other.decimalSeparator}" as the decimal separator: check format.decimalSeparator)`,
    );
  // The decimal separator is right, the grouping is not said: which one would read it.
  const grouping = (['.', ',', ' ', "'"] as const).find(
    (t) =>
      t !== format.decimalSeparator &&
      t !== format.thousandsSeparator &&
      signed !== null &&
      fromGrouped(signed.body, { ...format, thousandsSeparator: t }) !== null,
  );
  return fail(
    grouping === undefined
      ? reason
      : `${reason} (it reads with "${grouping}" between thousands: check format.thousandsSeparator)`,
  );
}

/**
 * The common case in one pass over the characters, for millions of rows: an optional leading `-`,
 * digits grouped by three with the separator (or not grouped), an optional fraction. Anything else
 * (other signs, spaces, a wrong grouping) gives null, and the full reading above decides.
 */
function quickPlain(text: string, decimal: string, thousands: string): string | null {
  const n = text.length;
  let i = text.charCodeAt(0) === 45 ? 1 : 0; // '-'
  let out = i === 1 ? '-' : '';
  let digits = 0;
  let grouped = false;
  let run = 0;
  let start = i;
  for (; i < n; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      digits++;
      run++;
      continue;
    }
    const char = text[i];
    if (char === thousands && thousands !== '' && run >= 1 && run <= 3 && (grouped ? run === 3 : true)) {
      if (!grouped && run > 3) return null;
      out += text.slice(start, i);
      start = i + 1;
      grouped = true;
      run = 0;
      continue;
    }
    if (char === decimal) break;
    return null;
  }
  if (digits === 0 || (grouped && run !== 3)) return null;
  out += text.slice(start, i);
  if (i === n) return out;
  // The fraction: digits only, at least one.
  const fraction = text.slice(i + 1);
  if (fraction.length === 0) return null;
  for (let j = 0; j < fraction.length; j++) {
    const code = fraction.charCodeAt(j);
    if (code < 48 || code > 57) return null;
  }
  return `${out}.${fraction}`;
}

/** The sign (a leading `-` or `+`, a trailing `-`, or accounting parentheses) and the digits part. */
function signOf(text: string): { negative: boolean; body: string } | null {
  let body = text;
  let negative = false;
  if (body.startsWith('(') && body.endsWith(')')) {
    negative = true;
    body = body.slice(1, -1).trim();
  } else if (body.startsWith('-') || body.startsWith('+')) {
    negative = body.startsWith('-');
    body = body.slice(1).trim();
  } else if (body.endsWith('-')) {
    negative = true;
    body = body.slice(0, -1).trim();
  }
  return body === '' ? null : { negative, body };
}

const isDigits = (text: string): boolean => /^\d+$/.test(text);

/** `1.234,56` (grouping optional, but then in threes) -> `1234.56`; null when it is not that. */
function fromGrouped(body: string, format: NumberFormat): string | null {
  const parts = body.split(format.decimalSeparator);
  if (parts.length > 2) return null;
  const [whole = '', fraction] = parts;
  if (fraction !== undefined && !isDigits(fraction)) return null;
  const digits = ungrouped(whole, format.thousandsSeparator);
  if (digits === null) return null;
  return fraction === undefined ? digits : `${digits}.${fraction}`;
}

/** The integer part without its thousands separators, checked to group in threes; null if not. */
function ungrouped(whole: string, separator: NumberFormat['thousandsSeparator']): string | null {
  if (isDigits(whole)) return whole;
  if (separator === '') return null;
  const groups = separator === ' ' ? splitOnSpaces(whole) : whole.split(separator);
  if (groups.length < 2) return null;
  const [first = '', ...rest] = groups;
  if (!/^\d{1,3}$/.test(first) || !rest.every((g) => /^\d{3}$/.test(g))) return null;
  return groups.join('');
}

function splitOnSpaces(text: string): string[] {
  const groups: string[] = [''];
  for (const char of text) {
    if (SPACES.has(char)) groups.push('');
    else groups[groups.length - 1] += char;
  }
  return groups;
}

/** `125000` with 2 decimals -> `1250.00`; null when it is not an integer. */
function fromMinorUnits(body: string, decimals: number): string | null {
  if (!isDigits(body)) return null;
  if (decimals === 0) return body;
  const padded = body.padStart(decimals + 1, '0');
  return `${padded.slice(0, -decimals)}.${padded.slice(-decimals)}`;
}
