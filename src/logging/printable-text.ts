/**
 * Text safe to show on a terminal or to write as one line of a text file. A file name (or a header
 * cell, a row value) is chosen by whoever dropped the file, and a name may legally hold any byte
 * but `/` and NUL: a line break would forge a line of the summary or of a reason file, an ESC
 * sequence would recolour, move the cursor of or retitle the terminal that prints it, and the
 * bidi controls would show a name other than the real one. Each such character is written as an
 * escape (`\n`, `\x1b`, `\u202e`), so what is printed is one line and shows what the name holds.
 */

/**
 * C0 controls, DEL, C1 controls (U+009B is a one-character CSI), bidi controls, line separators.
 * Built from a string: control characters are what this pattern is for.
 */
const UNPRINTABLE_SOURCE = String.raw`[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]`;
const UNPRINTABLE = new RegExp(UNPRINTABLE_SOURCE, 'g');
const UNPRINTABLE_ONE = new RegExp(UNPRINTABLE_SOURCE);

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOf(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * The text with every control character escaped; the same string when there is none (the usual
 * case, tested without a copy).
 *
 * @example
 * printable('invoices\n\u001b[2Jx.csv') // 'invoices\\n\\x1b[2Jx.csv'
 */
export function printable(text: string): string {
  return UNPRINTABLE_ONE.test(text) ? text.replace(UNPRINTABLE, escapeOf) : text;
}
