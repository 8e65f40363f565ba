import type { RowView } from '../../records/record-builders.js';

/**
 * A CSV row's values by contract column, as the record builders read them (trimmed, '' when the
 * column is absent). One is made for every row of every file, and each value is read several
 * times: a class (no closures to make per row) over the header's positions as a plain object.
 */
export class RowFields implements RowView {
  /**
   * @param positions contract column -> field index (`ResolvedHeader.index` as an object, made
   *   once per file: a property read is cheaper than a map lookup)
   * @param index the same as a map, for `has`
   */
  constructor(
    private readonly fields: readonly string[],
    private readonly positions: Readonly<Record<string, number>>,
    private readonly index: ReadonlyMap<string, number>,
  ) {}

  get(column: string): string {
    const i = this.positions[column];
    return typeof i === 'number' ? trimmed(this.fields[i] ?? '') : '';
  }

  has(column: string): boolean {
    return this.index.has(column);
  }
}

/** Whether every field is empty or white space (spreadsheets leave rows of empty cells). */
export function isBlank(fields: readonly string[]): boolean {
  for (const field of fields) if (trimmed(field) !== '') return false;
  return true;
}

/** Printable ASCII other than space: no `trim()` removes it. */
const isInk = (code: number): boolean => code > 32 && code < 127;

/** `value.trim()`, without the call for a value that starts and ends with a printable character (most). */
export function trimmed(value: string): string {
  return isInk(value.charCodeAt(0)) && isInk(value.charCodeAt(value.length - 1)) ? value : value.trim();
}
