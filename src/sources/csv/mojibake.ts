import type { CsvRow } from './csv-rows.js';

/**
 * UTF-8 text decoded once too often reads `CafÃ©` for `Café`, `MÃ¼ller` for `Müller`, `â‚¬` for
 * `€`: a UTF-8 file opened as Windows-1252 and saved as UTF-8 again (a spreadsheet round trip).
 * Such a value is valid text, so it would be synced as it is; the file gets a warning naming the
 * first one's line and column, so the user re-exports it before customers see the garbled names.
 */
/** A UTF-8 continuation byte (0x80-0xBF) as Windows-1252 shows it. */
const CONTINUATION = '\u0080-\u00bf€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ';
/** `Ã©` (2 bytes: é ü ß...), `â‚¬` `â€™` `â€“` (3 bytes from E2: € ’ – “ ” …). */
const DOUBLE_ENCODED = new RegExp(`[ÂÃ][${CONTINUATION}]|â[${CONTINUATION}]{2}`, 'u');

export class MojibakeWatch {
  #first: { line: number; column: string; value: string } | null = null;
  #count = 0;

  /** Looks at a row's fields (cheap for ASCII text: one test per field). */
  check(row: CsvRow, header: readonly string[]): void {
    const { fields } = row;
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      // Every pattern starts with Â, Ã or â: three scans of the text are cheaper than a regex.
      if (field.indexOf('Ã') === -1 && field.indexOf('Â') === -1 && field.indexOf('â') === -1) continue;
      if (!DOUBLE_ENCODED.test(field)) continue;
      this.#count++;
      this.#first ??= { line: row.line, column: header[i] ?? `#${i + 1}`, value: field };
    }
  }

  /** The warning for the file, or null when no value looked encoded twice. */
  warning(): string | null {
    const first = this.#first;
    if (first === null) return null;
    const more = this.#count > 1 ? ` (and ${this.#count - 1} more)` : '';
    return `line ${first.line}, column "${first.column}": "${clip(first.value)}" looks encoded twice (UTF-8 read as Windows-1252, then saved as UTF-8)${more}; it was synced as written: export the file again as UTF-8 from the billing system`;
  }
}

const clip = (text: string): string => (text.length > 60 ? `${text.slice(0, 57)}...` : text);
