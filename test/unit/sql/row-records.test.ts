import { describe, expect, it } from 'vitest';
import { textOf } from '../../../src/records/typed-values.js';
import { convertRow, resolveColumns, type StreamColumns } from '../../../src/sources/sql/row-records.js';
import { isoTimestamp } from '../../../src/sources/sql/row-values.js';
import type { StreamSettings } from '../../../src/sources/sql/sql-settings.js';

const settings = (extra: Partial<StreamSettings> = {}): StreamSettings => ({
  query: 'select 1',
  cursorColumns: ['updated_at', 'id'],
  ...extra,
});

describe('SQL values as contract text', () => {
  it('when Postgres prints a timestamp, then updatedAt is ISO 8601 in UTC with milliseconds', () => {
    expect(isoTimestamp('2026-01-15 09:30:00.123456+00')).toBe('2026-01-15T09:30:00.123Z');
    expect(isoTimestamp('2026-01-15 09:30:00+05:30')).toBe('2026-01-15T04:00:00.000Z');
    expect(isoTimestamp('2026-01-15 09:30:00-03')).toBe('2026-01-15T12:30:00.000Z');
    expect(isoTimestamp('2026-01-15 09:30:00')).toBe('2026-01-15T09:30:00.000Z');
    expect(isoTimestamp('2026-01-15')).toBe('2026-01-15');
    expect(isoTimestamp('yesterday')).toBe('yesterday');
  });

  it('when a timestamp is zone-less, then it is a wall-clock time of the timeZone setting; one with an offset is not', () => {
    // A MySQL DATETIME, a Postgres `timestamp`.
    expect(isoTimestamp('2026-01-15 09:30:00', 'Europe/Paris')).toBe('2026-01-15T08:30:00.000Z');
    expect(isoTimestamp('2026-07-01 12:00:00.500000', 'Europe/Paris')).toBe('2026-07-01T10:00:00.500Z');
    expect(isoTimestamp('2026-01-15 09:30:00', 'America/New_York')).toBe('2026-01-15T14:30:00.000Z');
    // A MySQL/MariaDB TIMESTAMP is read in UTC and carries its offset: the setting does not move it.
    expect(isoTimestamp('2026-01-15 09:30:00+00:00', 'Europe/Paris')).toBe('2026-01-15T09:30:00.000Z');
    // The hour skipped in spring is read with the offset before the change, the one repeated in autumn after it.
    expect(isoTimestamp('2026-03-29 02:30:00', 'Europe/Paris')).toBe('2026-03-29T01:30:00.000Z');
    expect(isoTimestamp('2026-10-25 02:30:00', 'Europe/Paris')).toBe('2026-10-25T01:30:00.000Z');
    // Not a time at all (MySQL's zero date, an impossible day): left for the validator to refuse.
    expect(isoTimestamp('0000-00-00 00:00:00+00:00')).toBe('0000-00-00 00:00:00+00:00');
    expect(isoTimestamp('2026-02-30 10:00:00')).toBe('2026-02-30 10:00:00');
  });

  it('when values are typed, then they become the text the CSV validators check', () => {
    expect(textOf(['vip', 'north'], 'tags')).toBe('vip|north');
    expect(textOf(new Date('2026-03-04T23:30:00Z'), 'issuedDate')).toBe('2026-03-04');
    expect(textOf({ year: 2026, month: 3, day: 4 }, 'dueDate')).toBe('2026-03-04');
    expect(textOf(null, 'city')).toBe('');
    expect(textOf('  Paris ', 'city')).toBe('Paris');
    expect(textOf(12, 'totalAmount')).toBe('12');
  });
});

describe('SQL rows as records', () => {
  it('when aliases were folded to lower case by Postgres, then they still match the contract columns', () => {
    const fields = [
      'sourceid',
      'fullname',
      'currencyCode',
      'billingaddress.city',
      'updated_at',
      'id',
      'extra',
    ];
    const resolution = resolveColumns('accounts', fields, settings());
    expect(resolution).toEqual({
      ok: true,
      columns: {
        contract: new Map([
          ['sourceId', 'sourceid'],
          ['fullName', 'fullname'],
          ['currencyCode', 'currencyCode'],
          ['billingAddress.city', 'billingaddress.city'],
        ]),
        ts: 'updated_at',
        id: 'id',
        deleted: null,
        unknown: ['extra'],
      },
    });
  });

  it('when required, cursor or tombstone columns are missing, then all are named at once', () => {
    const resolution = resolveColumns(
      'invoices',
      ['sourceId', 'ID', 'updated_at'],
      settings({ deletedColumn: 'gone' }),
    );
    expect(resolution.ok).toBe(false);
    expect(!resolution.ok && resolution.reason).toBe(
      'the invoices query returns no column "accountSourceId", "number", "issuedDate", "dueDate", "totalAmount", ' +
        '"taxAmount", cursor column "id" (the query returns "ID": names are case-sensitive here), deletedColumn "gone"; ' +
        'alias your columns to the contract\'s names, quoted (select name as "fullName", ...) and return the cursor columns',
    );
  });

  const columns: StreamColumns = {
    contract: new Map(
      [
        'sourceId',
        'accountSourceId',
        'number',
        'issuedDate',
        'dueDate',
        'totalAmount',
        'taxAmount',
        'file',
      ].map((c) => [c, c]),
    ),
    ts: 'updated_at',
    id: 'id',
    deleted: null,
    unknown: [],
  };
  const invoiceRow = {
    sourceId: 'F-1',
    accountSourceId: 'C-1',
    number: 'F-1',
    issuedDate: '2026-01-02',
    dueDate: '2026-02-01',
    totalAmount: '120.00',
    taxAmount: '20.00',
    file: null,
    updated_at: '2026-01-05 10:00:00.5+00',
    id: '1',
  };

  it('when the query has no updatedAt column, then the cursor timestamp is the record updatedAt', async () => {
    const converted = await convertRow(
      { stream: 'invoices', settings: settings(), columns, filesRealPath: null },
      invoiceRow,
    );
    expect(converted).toMatchObject({
      type: 'record',
      record: { sourceId: 'F-1', updatedAt: '2026-01-05T10:00:00.500Z', file: null },
      origin: { file: 'invoices id=1' },
    });
  });

  it('when a row names a PDF but the source has no filesDir, then the row is refused and says what to configure', async () => {
    const converted = await convertRow(
      { stream: 'invoices', settings: settings(), columns, filesRealPath: null },
      { ...invoiceRow, file: 'pdf/F-1.pdf' },
    );
    expect(converted).toMatchObject({
      type: 'rejected',
      problem: { sourceKey: 'F-1', column: 'file', reason: expect.stringContaining('"filesDir"') },
    });
  });
});
