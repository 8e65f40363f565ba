import { describe, expect, it } from 'vitest';
import { assertValidMapping, resolveHeader } from '../../../src/sources/csv/columns.js';
import { CsvSourceError } from '../../../src/sources/csv/errors.js';

const ACCOUNT_HEADER = ['sourceId', 'fullName', 'currencyCode'];

describe('resolveHeader', () => {
  it('when the header names the contract columns, in any case and order, then each gets its index', () => {
    const result = resolveHeader('accounts', ['CurrencyCode', ' sourceid ', 'FULLNAME', 'tags'], {});
    expect(result.ok && Object.fromEntries(result.header.index)).toEqual({
      currencyCode: 0,
      sourceId: 1,
      fullName: 2,
      tags: 3,
    });
  });

  it('when a column is unknown, then it is listed and ignored', () => {
    const result = resolveHeader('accounts', [...ACCOUNT_HEADER, 'Notes', ''], {});
    expect(result.ok && result.header.unknown).toEqual(['Notes']);
  });

  it('when the source maps its own headers, then they count as the contract columns', () => {
    const mapping = { 'Customer No': 'sourceId', name: 'fullName', Devise: 'currencyCode' };
    const result = resolveHeader('accounts', ['Customer No', 'Name', 'Devise'], mapping);
    expect(result.ok && Object.fromEntries(result.header.index)).toEqual({
      sourceId: 0,
      fullName: 1,
      currencyCode: 2,
    });
    expect(result.ok && result.header.cells).toEqual(['Customer No', 'Name', 'Devise']);
  });

  it('when a required column is missing, then the file is refused with a reason naming it', () => {
    expect(
      resolveHeader('invoices', ['sourceId', 'accountSourceId', 'issuedDate', 'dueDate', 'totalAmount'], {}),
    ).toEqual({
      ok: false,
      reason: 'missing required columns "number", "taxAmount" in the header row',
    });
    expect(resolveHeader('accounts', ['sourceId', 'fullName'], {})).toEqual({
      ok: false,
      reason: 'missing required column "currencyCode" in the header row',
    });
  });

  it('when two header cells land on the same column, then the file is refused', () => {
    const result = resolveHeader('accounts', [...ACCOUNT_HEADER, 'Name'], { Name: 'fullName' });
    expect(result).toEqual({
      ok: false,
      reason: 'column "fullName" is given twice in the header (by "fullName" and "Name")',
    });
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
