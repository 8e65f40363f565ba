import type { ColumnRef } from '../../config/csv-format-schema.js';

/**
 * How a file's columns are named in the configuration: by its header's cells, or, in a file
 * without a header (`format.headerLine: none`), by their letters as a spreadsheet shows them and
 * as Sage documents its layouts (`A`, `B`, ... `Z`, `AA`, ... `AX`). A number names a column by its
 * position from 1 in either.
 */
export class FileColumns {
  readonly #exact = new Map<string, number>();
  readonly #lower = new Map<string, number>();

  /**
   * @param cells the header's cells (trimmed), or, without a header, the letters of the columns of
   *   the file's first row (`columnLetters(width)`)
   * @param headerless the file has no header: a column is named by its letter
   */
  constructor(
    readonly cells: readonly string[],
    readonly headerless = false,
  ) {
    if (headerless) return;
    for (const [i, cell] of cells.entries()) {
      if (!this.#exact.has(cell)) this.#exact.set(cell, i);
      if (!this.#lower.has(cell.toLowerCase())) this.#lower.set(cell.toLowerCase(), i);
    }
  }

  /** The index of a column: a header (exact, then any case), a letter (headerless), a number. */
  indexOf(ref: ColumnRef): number | undefined {
    if (typeof ref === 'number') return ref >= 1 && ref <= this.cells.length ? ref - 1 : undefined;
    if (this.headerless) {
      const index = letterIndex(ref);
      return index !== null && index < this.cells.length ? index : undefined;
    }
    return this.#exact.get(ref.trim()) ?? this.#lower.get(ref.trim().toLowerCase());
  }

  /**
   * Why `key` (`columns.invoices.totalAmount`) names a column this file does not have, in the
   * terms of its configuration: a header it lacks, or a letter beyond its first row.
   */
  missing(key: string, ref: ColumnRef, near?: string | null): string {
    if (typeof ref === 'string' && !this.headerless) {
      const headers = this.cells.filter((c) => c !== '');
      return `${key} names the header "${ref}", which this file does not have${near ? ` (did you mean "${near}"?)` : ''}; its headers: ${headers.join(', ')}`;
    }
    if (typeof ref === 'string' && letterIndex(ref) === null)
      return `${key} names "${ref}", but the file has no header (format.headerLine: none): name its columns by letter (A, B, ... AX) or by number (1, 2, ...)`;
    const name = typeof ref === 'number' ? `column ${ref}` : `column ${ref.trim().toUpperCase()}`;
    const width = this.cells.length;
    const where = this.headerless
      ? `the ${width} column${width === 1 ? '' : 's'} of the file's first row (${this.span(width)})`
      : `the ${width} column${width === 1 ? '' : 's'} of its header`;
    return `${key} names ${name}, beyond ${where}`;
  }

  /** A column as the user reads it in an error: `column AD` without a header, else its header. */
  nameOf(index: number): string {
    return this.headerless ? `column ${columnLetter(index)}` : (this.cells[index] ?? `#${index + 1}`);
  }

  /** `A to O` for 15 columns: the letters a row of that width spans. */
  span(width: number): string {
    return letterSpan(width);
  }
}

/** `A` for 0, `Z` for 25, `AA` for 26, `AX` for 49: a column's letters as spreadsheets write them. */
export function columnLetter(index: number): string {
  let letters = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** `A to O` for 15 columns: the letters a row of that width spans. */
export const letterSpan = (width: number): string =>
  width === 0 ? 'none' : width === 1 ? 'A' : `A to ${columnLetter(width - 1)}`;

/** The letters of the first `width` columns: `A`, `B`, ... (the names of a headerless file's columns). */
export const columnLetters = (width: number): string[] =>
  Array.from({ length: width }, (_, i) => columnLetter(i));

/** The index of column letters (`AD` -> 29, any case), or null when the text is not 1 to 3 letters. */
export function letterIndex(text: string): number | null {
  const letters = text.trim().toUpperCase();
  if (!/^[A-Z]{1,3}$/.test(letters)) return null;
  let n = 0;
  for (const char of letters) n = n * 26 + (char.charCodeAt(0) - 64);
  return n - 1;
}
