import { describe, expect, it } from 'vitest';
import { RECORD_BUILDERS, type RowView } from '../../../src/records/record-builders.js';

const row = (values: Record<string, string>): RowView => ({ get: (column) => (values[column] ?? '').trim() });

const invoice = (overrides: Record<string, string> = {}) =>
  RECORD_BUILDERS.invoices(
    row({
      sourceId: 'INV-1',
      accountSourceId: 'ACC-1',
      number: 'F-1',
      issuedDate: '2026-01-15',
      dueDate: '2026-02-14',
      totalAmount: '120.00',
      taxAmount: '20.00',
      ...overrides,
    }),
  );

describe('account rows', () => {
  it('when an account row is valid, then it becomes an AccountRecord with its address and tags', () => {
    const built = RECORD_BUILDERS.accounts(
      row({
        sourceId: 'ACC-1',
        fullName: 'Atelier Lumière',
        currencyCode: 'EUR',
        'billingAddress.city': 'Paris',
        'billingAddress.country': 'FR',
        tags: 'vip|france',
        updatedAt: '2026-01-15T09:30:00Z',
      }),
    );
    expect(built).toEqual({
      issues: [],
      record: {
        kind: 'account',
        sourceId: 'ACC-1',
        fullName: 'Atelier Lumière',
        currencyCode: 'EUR',
        billingAddress: { street: null, city: 'Paris', postalCode: null, country: 'FR' },
        tags: ['vip', 'france'],
        updatedAt: '2026-01-15T09:30:00Z',
      },
    });
  });

  it('when several values are wrong, then every problem of the row is reported with its column', () => {
    const built = RECORD_BUILDERS.accounts(
      row({ sourceId: 'ACC-1', fullName: '', currencyCode: 'euro', 'billingAddress.country': 'Atlantis' }),
    );
    expect(built.record).toBeNull();
    expect(built.issues).toEqual([
      { column: 'fullName', reason: 'required value is empty' },
      { column: 'currencyCode', reason: 'not an ISO 4217 currency code (like EUR): "euro"' },
      {
        column: 'billingAddress.country',
        reason: 'not an ISO 3166-1 alpha-2 country code (like FR) nor a country\'s name: "Atlantis"',
      },
    ]);
  });
});

describe('invoice rows', () => {
  it('when an invoice row is valid, then dates become parts and amounts stay decimal strings', () => {
    const built = invoice({ paidAmount: '50.5', file: 'pdf/F-1.pdf' });
    expect(built.issues).toEqual([]);
    expect(built.record).toEqual({
      kind: 'invoice',
      sourceId: 'INV-1',
      accountSourceId: 'ACC-1',
      number: 'F-1',
      issuedDate: { year: 2026, month: 1, day: 15 },
      dueDate: { year: 2026, month: 2, day: 14 },
      totalAmount: '120.00',
      taxAmount: '20.00',
      billingAddress: null,
      file: 'pdf/F-1.pdf',
      paidAmount: '50.5',
      updatedAt: null,
    });
  });

  it('when every billing address column is empty, then the address is null (the account default)', () => {
    expect(invoice().record).toMatchObject({ billingAddress: null });
    expect(invoice({ 'billingAddress.city': 'Lyon' }).record).toMatchObject({
      billingAddress: { street: null, city: 'Lyon', postalCode: null, country: null },
    });
  });

  it('when a required value is empty, then the column is named', () => {
    for (const column of [
      'sourceId',
      'accountSourceId',
      'number',
      'issuedDate',
      'dueDate',
      'totalAmount',
      'taxAmount',
    ]) {
      expect(invoice({ [column]: '  ' }).issues, column).toEqual([
        { column, reason: 'required value is empty' },
      ]);
    }
  });

  it('when a date is impossible or an amount malformed, then the reason quotes the value', () => {
    expect(invoice({ issuedDate: '2026-02-30', totalAmount: '12,50', taxAmount: '1e3' }).issues).toEqual([
      { column: 'issuedDate', reason: 'not a calendar date: "2026-02-30"' },
      { column: 'totalAmount', reason: 'not an amount (a decimal with a dot, like 1234.50): "12,50"' },
      { column: 'taxAmount', reason: 'not an amount (a decimal with a dot, like 1234.50): "1e3"' },
    ]);
  });

  it('when the paid amount is above the total or negative, then it is refused; equal to the total is fine', () => {
    expect(invoice({ paidAmount: '120.01' }).issues).toEqual([
      { column: 'paidAmount', reason: 'is more than totalAmount (120.01 > 120.00)' },
    ]);
    expect(invoice({ paidAmount: '-1' }).issues).toEqual([
      { column: 'paidAmount', reason: 'cannot be negative: "-1"' },
    ]);
    expect(invoice({ paidAmount: '120' }).issues).toEqual([]);
    expect(invoice({ paidAmount: '0' }).issues).toEqual([]);
  });

  it('when the due date is before the issue date, then the row is kept: it is the user data', () => {
    expect(invoice({ dueDate: '2026-01-01' }).issues).toEqual([]);
  });

  it('when updatedAt is not ISO 8601, then it is refused', () => {
    expect(invoice({ updatedAt: '15/01/2026' }).issues).toEqual([
      { column: 'updatedAt', reason: 'not an ISO 8601 date-time (like 2026-01-15T09:30:00Z): "15/01/2026"' },
    ]);
  });
});

describe('credit note rows', () => {
  it('when a credit note row is valid, then it has no due date and no paid amount', () => {
    const built = RECORD_BUILDERS.creditNotes(
      row({
        sourceId: 'CN-1',
        accountSourceId: 'ACC-1',
        number: 'A-1',
        issuedDate: '2026-01-30',
        totalAmount: '10',
        taxAmount: '0',
      }),
    );
    expect(built).toEqual({
      issues: [],
      record: {
        kind: 'creditNote',
        sourceId: 'CN-1',
        accountSourceId: 'ACC-1',
        number: 'A-1',
        issuedDate: { year: 2026, month: 1, day: 30 },
        totalAmount: '10',
        taxAmount: '0',
        file: null,
        updatedAt: null,
      },
    });
  });

  it('when a credit note misses its number, then the column is named', () => {
    const built = RECORD_BUILDERS.creditNotes(
      row({
        sourceId: 'CN-1',
        accountSourceId: 'ACC-1',
        issuedDate: '2026-01-30',
        totalAmount: '10',
        taxAmount: '0',
      }),
    );
    expect(built.issues).toEqual([{ column: 'number', reason: 'required value is empty' }]);
  });
});
