import { describe, expect, it } from 'vitest';
import {
  assertValidMapping,
  dataFields,
  nearMiss,
  neutralizedCell,
  resolveHeader,
} from '../../../src/sources/csv/columns.js';
import { CsvSourceError } from '../../../src/sources/csv/errors.js';

const ACCOUNT_HEADER = ['sourceId', 'fullName', 'currencyCode'];

describe('resolveHeader', () => {
  it('when the header names the contract columns, in any case and order, then each gets its index', () => {
    const result = resolveHeader('accounts', ['CurrencyCode', ' sourceid ', 'FULLNAME', 'tags'], {
      mapping: {},
    });
    expect(result.ok && Object.fromEntries(result.header.index)).toEqual({
      currencyCode: 0,
      sourceId: 1,
      fullName: 2,
      tags: 3,
    });
  });

  it('when a column is unknown, then it is listed and ignored', () => {
    const result = resolveHeader('accounts', [...ACCOUNT_HEADER, 'Notes', ''], { mapping: {} });
    expect(result.ok && result.header.unknown).toEqual(['Notes']);
  });

  it('when the source maps its own headers, then they count as the contract columns', () => {
    const mapping = { 'Customer No': 'sourceId', name: 'fullName', Devise: 'currencyCode' };
    const result = resolveHeader('accounts', ['Customer No', 'Name', 'Devise'], { mapping });
    expect(result.ok && Object.fromEntries(result.header.index)).toEqual({
      sourceId: 0,
      fullName: 1,
      currencyCode: 2,
    });
    expect(result.ok && result.header.cells).toEqual(['Customer No', 'Name', 'Devise']);
  });

  it('when a required column is missing, then the file is refused with a reason naming it', () => {
    expect(
      resolveHeader('invoices', ['sourceId', 'accountSourceId', 'issuedDate', 'dueDate', 'totalAmount'], {
        mapping: {},
      }),
    ).toEqual({
      ok: false,
      reason: 'missing required columns "number", "taxAmount" in the header row',
    });
    expect(resolveHeader('accounts', ['sourceId', 'fullName'], { mapping: {} })).toEqual({
      ok: false,
      reason: 'missing required column "currencyCode" in the header row',
    });
  });

  it('when two header cells land on the same column, then the file is refused', () => {
    const result = resolveHeader('accounts', [...ACCOUNT_HEADER, 'Name'], { mapping: { Name: 'fullName' } });
    expect(result).toEqual({
      ok: false,
      reason: 'column "fullName" is given twice in the header (by "fullName" and "Name")',
    });
  });
});

describe('unknown columns', () => {
  const INVOICE = [
    'sourceId',
    'accountSourceId',
    'number',
    'issuedDate',
    'dueDate',
    'totalAmount',
    'taxAmount',
  ];

  it('when an optional column is misspelt, then the warning names it and suggests the column', () => {
    const result = resolveHeader('invoices', [...INVOICE, 'paidAmout'], { mapping: {} });
    expect(result.ok && result.header.warnings).toEqual([
      'unknown column "paidAmout" (did you mean "paidAmount"?): its values were ignored',
    ]);
  });

  it('when a column belongs to another kind of file, then the warning says so', () => {
    const result = resolveHeader('creditNotes', [...INVOICE.filter((c) => c !== 'dueDate'), 'dueDate'], {
      mapping: {},
    });
    expect(result.ok && result.header.warnings).toEqual([
      'unknown column "dueDate" (a column of invoices files only): its values were ignored',
    ]);
  });

  it('when strictColumns is on, then an unknown column refuses the file with the suggestion', () => {
    expect(
      resolveHeader('invoices', [...INVOICE, 'paidAmout'], { mapping: {}, strictColumns: true }),
    ).toEqual({
      ok: false,
      reason:
        'unknown column "paidAmout" (did you mean "paidAmount"?): strictColumns is on, so a file holds only ' +
        "the CSV contract's columns (or mapped ones)",
    });
    expect(resolveHeader('invoices', INVOICE, { mapping: {}, strictColumns: true }).ok).toBe(true);
  });

  it('when a near miss is far from every column, then nothing is suggested', () => {
    expect(nearMiss('paidamout', ['paidAmount', 'file'])).toBe('paidAmount');
    expect(nearMiss('Tgas', ['tags'])).toBe(null); // two edits in four letters: too far
    expect(nearMiss('currencycod', ['currencyCode'])).toBe('currencyCode');
    expect(nearMiss('tag', ['tags'])).toBe('tags');
    expect(nearMiss('notes', ['tags', 'updatedAt'])).toBe(null);
    expect(nearMiss('ab', ['file'])).toBe(null);
    expect(nearMiss('anything', [])).toBe(null);
  });
});

describe('a report dropped back', () => {
  it("when the header holds a report's errors.* columns, then they are neither data nor unknown", () => {
    const result = resolveHeader(
      'accounts',
      ['errors.line', 'errors.column', 'errors.reason', ...ACCOUNT_HEADER],
      { mapping: {}, strictColumns: true },
    );
    if (!result.ok) throw new Error(result.reason);
    expect(result.header.cells).toEqual(ACCOUNT_HEADER);
    expect(Object.fromEntries(result.header.index)).toEqual({ sourceId: 0, fullName: 1, currencyCode: 2 });
    expect(dataFields(result.header, ['4', 'fullName', 'required', 'C-1', "'=HYPERLINK(1)", "'-5"])).toEqual([
      'C-1',
      '=HYPERLINK(1)',
      '-5',
    ]);
  });

  it('when a plain file holds a leading quote, then it is kept as written', () => {
    const result = resolveHeader('accounts', ACCOUNT_HEADER, { mapping: {} });
    if (!result.ok) throw new Error(result.reason);
    expect(dataFields(result.header, ['C-1', "'=x", 'EUR'])).toEqual(['C-1', "'=x", 'EUR']);
  });

  it('when a cell starts like a formula, then it is neutralised with a quote', () => {
    for (const cell of ['=1+1', '+33 1', '-5', '@SUM(A1)', '\tx', '\rx'])
      expect(neutralizedCell(cell)).toBe(`'${cell}`);
    for (const cell of ['plain', "'quoted", '1-2', '']) expect(neutralizedCell(cell)).toBe(cell);
  });
});

describe('assertValidMapping', () => {
  it('when a mapping target is no contract column, then the configuration is refused with a code', () => {
    expect(() => assertValidMapping('erp', { Kunde: 'customerId' })).toThrowError(CsvSourceError);
    expect(() => assertValidMapping('erp', { Kunde: 'customerId' })).toThrowError(
      /mapping "Kunde" -> "customerId"/,
    );
    expect(() =>
      assertValidMapping('erp', { Kunde: 'sourceId', Stadt: 'billingAddress.city' }),
    ).not.toThrow();
  });
});
