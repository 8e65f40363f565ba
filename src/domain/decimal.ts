/**
 * Decimal amounts as strings, computed exactly with bigint (never JS floats).
 * A `Decimal` is an integer count of 10^-SCALE units.
 */
export const SCALE = 6;
const FACTOR = 10n ** BigInt(SCALE);
const DECIMAL_RE = /^([+-])?(\d+)(?:\.(\d+))?$/;

export type Decimal = bigint;

/** True when `text` is a plain decimal with a dot (`12`, `-3.50`), at most SCALE fraction digits. */
export function isDecimal(text: string): boolean {
  const m = DECIMAL_RE.exec(text);
  return m !== null && (m[3] ?? '').length <= SCALE;
}

/** Parses `"12.30"` into scaled units; throws a RangeError naming the text when it is not a decimal. */
export function parseDecimal(text: string): Decimal {
  const m = DECIMAL_RE.exec(text.trim());
  if (!m || (m[3] ?? '').length > SCALE) throw new RangeError(`not a decimal amount: "${text}"`);
  const units = BigInt(m[2]!) * FACTOR + BigInt((m[3] ?? '').padEnd(SCALE, '0'));
  return m[1] === '-' ? -units : units;
}

/** Formats scaled units as a decimal string with at least `minFraction` fraction digits (default 2). */
export function formatDecimal(value: Decimal, minFraction = 2): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / FACTOR;
  let fraction = (abs % FACTOR).toString().padStart(SCALE, '0').replace(/0+$/, '');
  if (fraction.length < minFraction) fraction = fraction.padEnd(minFraction, '0');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/**
 * Normalises a decimal string: `"12.3"` -> `"12.30"`, `"+007.500"` -> `"7.50"`, `"-0"` -> `"0.00"`;
 * the same result as `formatDecimal(parseDecimal(text))`, by string operations alone (it runs for
 * every amount of every record a sync compares, where bigint arithmetic is measurably slower).
 */
export function normalizeDecimal(text: string): string {
  if (isNormal(text)) return text;
  const m = DECIMAL_RE.exec(text.trim());
  if (!m || (m[3] ?? '').length > SCALE) throw new RangeError(`not a decimal amount: "${text}"`);
  const whole = m[2]!.replace(LEADING_ZEROS, '');
  let fraction = (m[3] ?? '').replace(TRAILING_ZEROS, '');
  const zero = whole === '0' && fraction === '';
  if (fraction.length < 2) fraction = fraction.padEnd(2, '0');
  return `${m[1] === '-' && !zero ? '-' : ''}${whole}.${fraction}`;
}
const LEADING_ZEROS = /^0+(?=\d)/;
/** Already normal: no sign, no leading zero, exactly two fraction digits (`120.00`, `0.50`). */
const NORMAL_RE = /^(?:0|[1-9]\d*)\.\d\d$/;
const isNormal = (text: string): boolean => NORMAL_RE.test(text);
const TRAILING_ZEROS = /0+$/;

export const compareDecimal = (a: string, b: string): number => {
  const d = parseDecimal(a) - parseDecimal(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};
