import { describe, expect, it } from 'vitest';
import {
  columnLetter,
  columnLetters,
  FileColumns,
  letterIndex,
  letterSpan,
} from '../../../src/sources/csv/file-columns.js';

describe('column letters', () => {
  it('when a column index is written as letters, then it reads as a spreadsheet shows it, and back', () => {
    const cases: Array<[number, string]> = [
      [0, 'A'],
      [25, 'Z'],
      [26, 'AA'],
      [29, 'AD'],
      [49, 'AX'],
      [701, 'ZZ'],
      [702, 'AAA'],
    ];
    for (const [index, letters] of cases) {
      expect(columnLetter(index)).toBe(letters);
      expect(letterIndex(letters)).toBe(index);
    }
    expect(letterIndex(' ad ')).toBe(29);
    expect(columnLetters(3)).toEqual(['A', 'B', 'C']);
    expect([letterSpan(0), letterSpan(1), letterSpan(15)]).toEqual(['none', 'A', 'A to O']);
  });

  it('when a text is not 1 to 3 letters, then it is no column letter', () => {
    for (const text of ['', 'A1', 'Net Amount', 'ABCD', 'É']) expect(letterIndex(text)).toBeNull();
  });
});

describe('FileColumns', () => {
  const headerless = new FileColumns(columnLetters(15), true);
  const withHeader = new FileColumns(['Nr', 'Kunde', 'A']);

  it('when a file has no header, then a column is named by its letter (any case) or its number from 1', () => {
    expect([headerless.indexOf('A'), headerless.indexOf('o'), headerless.indexOf(15)]).toEqual([0, 14, 14]);
    expect([headerless.indexOf('P'), headerless.indexOf(16), headerless.indexOf('Net')]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(headerless.nameOf(9)).toBe('column J');
  });

  it('when a file has a header, then a text names a header (a letter too) and a number a position', () => {
    expect([withHeader.indexOf('kunde'), withHeader.indexOf('A'), withHeader.indexOf(1)]).toEqual([1, 2, 0]);
    expect(withHeader.indexOf('B')).toBeUndefined();
    expect(withHeader.nameOf(1)).toBe('Kunde');
  });

  it('when a configured column is not in the file, then the reason names the key and the column as the user writes it', () => {
    expect(headerless.missing('columns.invoices.dueDate', 'ad')).toBe(
      "columns.invoices.dueDate names column AD, beyond the 15 columns of the file's first row (A to O)",
    );
    expect(headerless.missing('rows.kindFrom.column', 40)).toBe(
      "rows.kindFrom.column names column 40, beyond the 15 columns of the file's first row (A to O)",
    );
    expect(headerless.missing('columns.invoices.totalAmount', 'Net Amount')).toBe(
      'columns.invoices.totalAmount names "Net Amount", but the file has no header (format.headerLine: none): name its columns by letter (A, B, ... AX) or by number (1, 2, ...)',
    );
    expect(withHeader.missing('columns.invoices.taxAmount', 'MwSt')).toBe(
      'columns.invoices.taxAmount names the header "MwSt", which this file does not have; its headers: Nr, Kunde, A',
    );
    expect(withHeader.missing('columns.invoices.taxAmount', 9)).toBe(
      'columns.invoices.taxAmount names column 9, beyond the 3 columns of its header',
    );
  });
});
