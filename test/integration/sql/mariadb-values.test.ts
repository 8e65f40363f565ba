import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord, InvoiceRecord } from '../../../src/domain/records.js';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSqlSource } from '../../../src/sources/sql/index.js';
import { adminConnection } from '../../support/mariadb.js';
import { drain } from './billing-fixture.js';
import { createDolibarrDb, type DolibarrDb } from './dolibarr-fixture.js';

const logger = pino({ level: 'silent' });

/**
 * The values a MySQL/MariaDB session hands to the records: exact amounts from DECIMAL and from
 * Dolibarr's DOUBLE(24,8), never a JS number; dates as text; zone-less DATETIMEs placed by the
 * `timeZone` setting; TIMESTAMPs read in UTC whatever the zone of the session that wrote them.
 */
describe('SQL source on MariaDB: exact amounts, dates and time zones', () => {
  let db: DolibarrDb;
  let cursors: InMemoryCursorStore;

  const invoicesOf = (query: string, extra: Record<string, unknown> = {}) =>
    createSqlSource({
      config: {
        id: 'erp',
        urlEnv: 'ERP_URL',
        lookbackSeconds: 0,
        streams: { invoices: { query, cursorColumns: ['tms', 'id'] } },
        ...extra,
      },
      cursors,
      logger,
      env: { ERP_URL: db.url },
    });
  const QUERY = `select ref as sourceId, 'CU-1' as accountSourceId, ref as number, issued as issuedDate,
                   due as dueDate, total as totalAmount, tax as taxAmount, paid as paidAmount, tms, id
                 from amounts`;
  const addAmount = (
    id: string,
    ref: string,
    values: { total: string; tax?: string; paid?: string | null },
  ) =>
    db.sql(
      `insert into amounts (id, ref, issued, due, total, tax, paid, tms)
       values (?, ?, '2026-01-15', '2026-02-14', ${values.total}, ${values.tax ?? '0'}, ${values.paid ?? 'null'},
               '2026-01-15 09:30:00')`,
      [id, ref],
    );

  beforeAll(async () => {
    db = await createDolibarrDb('values');
    await db.sql(`
      create table amounts (
        id bigint primary key, ref varchar(30) not null, issued date not null, due date not null,
        total double(24,8) not null, tax decimal(14,4) not null, paid double,
        tms timestamp(6) not null default current_timestamp(6), changed datetime(6));`);
  });
  afterAll(async () => {
    await db?.close();
  });
  beforeEach(async () => {
    cursors = new InMemoryCursorStore();
    await db.sql('delete from amounts');
  });

  it('when amounts are DOUBLE(24,8) and DECIMAL, then their text is kept exactly: 1440.00000000 is 1440.00', async () => {
    // A BIGINT past 2^53 as the cursor id: text, not a rounded number.
    await addAmount('9007199254740993', 'FA-1', { total: '1440', tax: '240.0000', paid: '1000.3' });
    await addAmount('2', 'FA-2', { total: '0.1', tax: '0.0200' });
    const source = invoicesOf(QUERY);
    const pass = await drain(source.units());
    expect(pass.rejected).toEqual([]);
    const byRef = Object.fromEntries(pass.records.invoices.map((r) => [r.sourceId, r as InvoiceRecord]));
    expect(byRef['FA-1']).toMatchObject({
      totalAmount: '1440.00',
      // At most 6 decimals: kept as written (a decimal compares by value, not by text).
      taxAmount: '240.0000',
      paidAmount: '1000.3',
      issuedDate: { year: 2026, month: 1, day: 15 },
      dueDate: { year: 2026, month: 2, day: 14 },
    });
    expect(byRef['FA-2']).toMatchObject({ totalAmount: '0.10', taxAmount: '0.0200' });
    expect((await cursors.get('erp', 'invoices'))!.values).toEqual([
      '2026-01-15 09:30:00.000000+00:00',
      '9007199254740993',
    ]);
  });

  it('when a floating-point amount has no exact decimal of at most 6 places, then its row is refused and says why', async () => {
    // DOUBLE(24,8) rounds 1440.123456789 to 8 places when it stores it: 1440.12345679.
    await addAmount('1', 'FA-1', { total: '1440.123456789' });
    // A plain DOUBLE prints what the float holds: 0.1 + 0.2 in floating point, and 1e21, are no amounts.
    await addAmount('2', 'FA-2', { total: '100', paid: '0.1e0 + 0.2e0' });
    await addAmount('3', 'FA-3', { total: '100', paid: '1e21' });
    await addAmount('4', 'FA-4', { total: '100', paid: '12.5' });
    const pass = await drain(invoicesOf(QUERY).units());
    expect(pass.records.invoices.map((r) => [r.sourceId, (r as InvoiceRecord).paidAmount])).toEqual([
      ['FA-4', '12.5'],
    ]);
    expect(pass.rejected.map((p) => [p.sourceKey, p.column, p.reason])).toEqual([
      [
        'FA-1',
        'totalAmount',
        'has 8 decimals, more than the 6 kept (and the digits past them are not zeros): "1440.12345679"',
      ],
      [
        'FA-2',
        'paidAmount',
        'has 17 decimals, more than the 6 kept (and the digits past them are not zeros): "0.30000000000000004"',
      ],
      ['FA-3', 'paidAmount', 'not an amount (a decimal with a dot, like 1234.50): "1e21"'],
    ]);
  });

  it('when updatedAt is a zone-less DATETIME, then it is read in the timeZone setting; UTC by default', async () => {
    await addAmount('1', 'FA-1', { total: '10' });
    await db.sql("update amounts set changed = '2026-07-01 12:00:00.250000'");
    const query = QUERY.replace('tms, id', 'changed as updatedAt, tms, id');
    const paris = await drain(invoicesOf(query, { timeZone: 'Europe/Paris' }).units());
    expect(paris.records.invoices[0]!.updatedAt).toBe('2026-07-01T10:00:00.250Z');
    cursors = new InMemoryCursorStore();
    const utc = await drain(invoicesOf(query).units());
    expect(utc.records.invoices[0]!.updatedAt).toBe('2026-07-01T12:00:00.250Z');
  });

  it('when a TIMESTAMP was written by a session in another zone, then it is read in UTC and timeZone does not move it', async () => {
    // MariaDB shows a TIMESTAMP in the session's zone (the server's by default): the source's
    // session is in UTC, so a writer at +05:00 and a reader anywhere agree on the instant.
    const writer = await adminConnection(db.database);
    try {
      await writer.query("set time_zone = '+05:00'");
      await writer.query(
        `insert into llx_societe (rowid, nom, code_client, client, tms) values (1, 'Client 1', 'CU-1', 1, '2026-01-15 14:30:00')`,
      );
    } finally {
      await writer.end();
    }
    const source = createSqlSource({
      config: {
        id: 'erp',
        urlEnv: 'ERP_URL',
        timeZone: 'America/New_York',
        streams: {
          accounts: {
            query: `select code_client as sourceId, nom as fullName, 'EUR' as currencyCode, tms, rowid
                    from llx_societe`,
            cursorColumns: ['tms', 'rowid'],
          },
        },
      },
      cursors,
      logger,
      env: { ERP_URL: db.url },
    });
    const pass = await drain(source.units());
    expect((pass.records.accounts[0] as AccountRecord).updatedAt).toBe('2026-01-15T09:30:00.000Z');
    expect((await cursors.get('erp', 'accounts'))!.values).toEqual(['2026-01-15 09:30:00+00:00', '1']);
  });
});
