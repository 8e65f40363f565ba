import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AccountRecord } from '../../../src/domain/records.js';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import { createSqlSource, SqlSourceError } from '../../../src/sources/sql/index.js';
import { TEST_DATABASE_URL } from '../../support/postgres.js';
import { type BillingDb, billingStreams, createBillingDb, drain } from './billing-fixture.js';

const logger = pino({ level: 'silent' });
const env = { BILLING_URL: TEST_DATABASE_URL };

describe('SQL source keyset, look-back, tombstones and failures', () => {
  let billing: BillingDb;
  let cursors: InMemoryCursorStore;

  const streams = () => billingStreams(billing.schema);
  const source = (config: Record<string, unknown>, batchSize?: number) =>
    createSqlSource({
      config: { id: 'billing-db', urlEnv: 'BILLING_URL', lookbackSeconds: 0, ...config },
      cursors,
      logger,
      env,
      ...(batchSize ? { batchSize } : {}),
    });
  const addCustomer = (
    id: number,
    updatedAt: string,
    extra: { deleted?: boolean; name?: string | null; currency?: string } = {},
  ) =>
    billing.sql(
      `insert into $schema.customers (id, name, currency, country, deleted, updated_at) values ($1, $2, $3, 'FR', $4, $5)`,
      [
        id,
        extra.name === undefined ? `Customer ${id}` : extra.name,
        extra.currency ?? 'EUR',
        extra.deleted ?? false,
        updatedAt,
      ],
    );
  const ids = (records: Array<{ sourceId: string }>) => records.map((r) => r.sourceId);

  beforeAll(async () => {
    billing = await createBillingDb('keyset');
  });
  afterAll(async () => {
    await billing?.close();
  });
  beforeEach(async () => {
    cursors = new InMemoryCursorStore();
    await billing.sql('truncate $schema.customers, $schema.invoices, $schema.credit_notes');
  });

  it('when rows share an updated_at across page boundaries, then each is read once, in (updated_at, id) order', async () => {
    await addCustomer(1, '2026-01-01 10:00:00+00');
    await addCustomer(2, '2026-01-01 10:00:01+00');
    // Three rows on the same microsecond; pages of 2 split them [1,2] [3,4] [5,6] [7].
    for (const id of [5, 3, 4]) await addCustomer(id, '2026-01-01 10:00:02.123456+00');
    await addCustomer(6, '2026-01-01 10:00:03+00');
    await addCustomer(7, '2026-01-01 10:00:03+00');
    const first = source({ streams: { accounts: streams().accounts } }, 2);
    const pass = await drain(first.units());
    expect(ids(pass.records.accounts)).toEqual(['1', '2', '3', '4', '5', '6', '7']);
    expect(first.lastPass().streams.accounts).toMatchObject({ rowsRead: 7, pages: 4, largestPage: 2 });
  });

  it('when the cursor stops inside a group of ties, then the next pass reads the later ties only, none twice', async () => {
    const tie = '2026-01-01 10:00:02.123456+00';
    await addCustomer(1, '2026-01-01 10:00:00+00');
    await addCustomer(3, tie);
    await addCustomer(4, tie);
    const accounts = { streams: { accounts: streams().accounts } };
    await drain(source(accounts, 2).units());
    expect((await cursors.get('billing-db', 'accounts'))!.values).toEqual([tie, '4']);

    await addCustomer(5, tie);
    await addCustomer(6, tie);
    await addCustomer(7, '2026-01-01 10:00:02.123457+00');
    const next = source(accounts, 2);
    const pass = await drain(next.units());
    expect(ids(pass.records.accounts)).toEqual(['5', '6', '7']);
    expect(next.lastPass().streams.accounts).toMatchObject({ start: 'after', rowsRead: 3 });
  });

  it('when a row is committed late with an updated_at inside the look-back, then it is read; outside it, it is not', async () => {
    await addCustomer(1, '2026-01-01 10:00:00+00');
    await addCustomer(2, '2026-01-01 11:00:00+00');
    const config = { lookbackSeconds: 300, streams: { accounts: streams().accounts } };
    await drain(source(config).units());
    expect((await cursors.get('billing-db', 'accounts'))!.values).toEqual(['2026-01-01 11:00:00+00', '2']);

    // Both transactions took their updated_at before the pass and committed after it.
    await addCustomer(10, '2026-01-01 10:58:00+00'); // 2 minutes behind the cursor: inside 300 s
    await addCustomer(11, '2026-01-01 10:50:00+00'); // 10 minutes behind: outside, missed (a reset re-reads it)
    const next = source(config);
    const pass = await drain(next.units());
    expect(ids(pass.records.accounts)).toEqual(['10', '2']);
    expect(next.lastPass().streams.accounts).toMatchObject({ start: 'since', rowsRead: 2 });
    // The row re-read in the window does not move the cursor back.
    expect((await cursors.get('billing-db', 'accounts'))!.values).toEqual(['2026-01-01 11:00:00+00', '2']);

    // Without a look-back, a late row just behind the cursor is missed too.
    await addCustomer(12, '2026-01-01 10:59:59+00');
    const exact = source({ ...config, lookbackSeconds: 0 });
    expect(ids((await drain(exact.units())).records.accounts)).toEqual([]);
  });

  it('when an account row is a tombstone, then it is emitted as deleted (unlink), tagged, or skipped, as configured', async () => {
    await addCustomer(1, '2026-01-01 10:00:00+00', { deleted: true });
    // A tombstone whose other columns were emptied still unlinks by its key.
    await addCustomer(2, '2026-01-01 10:00:01+00', { deleted: true, name: null, currency: '' });
    await addCustomer(3, '2026-01-01 10:00:02+00');
    const unlink = await drain(source({ streams: { accounts: streams().accounts } }).units());
    expect(unlink.rejected).toEqual([]);
    expect(unlink.records.accounts.map((r) => [r.sourceId, (r as AccountRecord).deleted ?? false])).toEqual([
      ['1', true],
      ['2', true],
      ['3', false],
    ]);
    expect(unlink.records.accounts[1]).toMatchObject({ fullName: '', currencyCode: '', deleted: true });

    cursors = new InMemoryCursorStore();
    const tag = source({
      streams: { accounts: { ...streams().accounts, onDelete: 'tag', deletedTag: 'closed' } },
    });
    const tagged = await drain(tag.units());
    expect(tagged.records.accounts.map((r) => [r.sourceId, (r as AccountRecord).tags])).toEqual([
      ['1', ['closed']],
      ['3', []],
    ]);
    expect(tagged.rejected.map((p) => [p.sourceKey, p.column])).toEqual([['2', 'fullName; currencyCode']]);

    cursors = new InMemoryCursorStore();
    const skip = source({ streams: { accounts: { ...streams().accounts, onDelete: 'skip' } } });
    expect(ids((await drain(skip.units())).records.accounts)).toEqual(['3']);
    expect(skip.lastPass().streams.accounts).toMatchObject({ rowsRead: 3, tombstonesSkipped: 2, records: 1 });
  });

  it('when an invoice row is a tombstone, then it is skipped and counted, never emitted', async () => {
    await billing.sql(
      `insert into $schema.invoices (id, customer_id, number, issued_on, due_on, total, tax, deleted, updated_at) values
       (1, 1, 'F-1', '2026-01-02', '2026-02-01', 120.00, 20.00, true, '2026-01-05 00:00:00+00'),
       (2, 1, 'F-2', '2026-01-03', '2026-02-02', 60.00, 10.00, false, '2026-01-05 00:00:01+00')`,
    );
    const invoices = source({ streams: { invoices: streams().invoices } });
    const pass = await drain(invoices.units());
    expect(ids(pass.records.invoices)).toEqual(['INV-2']);
    expect(invoices.lastPass().streams.invoices).toMatchObject({ rowsRead: 2, tombstonesSkipped: 1 });
    expect((await cursors.get('billing-db', 'invoices'))!.values).toEqual(['2026-01-05 00:00:01+00', '2']);
  });

  it('when rows break the contract, then they are refused with the CSV reasons and the column, and the rest goes on', async () => {
    await addCustomer(1, '2026-01-01 10:00:00+00', { currency: 'euro' });
    await addCustomer(2, '2026-01-01 10:00:01+00');
    await billing.sql(
      `insert into $schema.invoices (id, customer_id, number, issued_on, due_on, total, tax, paid, updated_at) values
       (1, 2, 'F-1', '2026-01-02', '2026-02-01', 120.00, 20.00, 130.00, '2026-01-05 00:00:00+00')`,
    );
    const pass = await drain(
      source({ streams: { accounts: streams().accounts, invoices: streams().invoices } }).units(),
    );
    expect(ids(pass.records.accounts)).toEqual(['2']);
    expect(pass.rejected).toEqual([
      expect.objectContaining({
        kind: 'account',
        sourceKey: '1',
        file: 'accounts id=1',
        column: 'currencyCode',
        reason: 'not an ISO 4217 currency code (like EUR): "euro"',
        raw: expect.objectContaining({ sourceId: '1', currencyCode: 'euro' }),
      }),
      expect.objectContaining({
        kind: 'invoice',
        sourceKey: 'INV-1',
        column: 'paidAmount',
        reason: 'is more than totalAmount (130.00 > 120.00)',
      }),
    ]);
  });

  it('when the query lacks contract or cursor columns, then the unit fails with the names to add', async () => {
    const bad = source({
      streams: {
        accounts: {
          query: `select id::text as "sourceId", name as fullname, updated_at as "Updated_At", id from "${billing.schema}".customers`,
        },
      },
    });
    const error = await drain(bad.units()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqlSourceError);
    expect((error as SqlSourceError).code).toBe('SQL_COLUMNS_MISSING');
    expect((error as Error).message).toContain(
      'no column "currencyCode", cursor column "updated_at" (the query returns "Updated_At"',
    );
  });

  it('when a query writes, runs too long or is broken, then the unit fails with a coded error and nothing is changed', async () => {
    await addCustomer(1, '2026-01-01 10:00:00+00');
    await billing.sql('create sequence if not exists $schema.numbers');
    const write = source({
      streams: {
        accounts: {
          ...streams().accounts,
          query: `select *, nextval('${billing.schema}.numbers') from (${streams().accounts.query}) c`,
        },
      },
    });
    const writeError = (await drain(write.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(writeError.code).toBe('SQL_QUERY_FAILED');
    expect(writeError.message).toContain('read-only transaction');

    // pg_sleep is the slow query under test (2 s of work against a 200 ms statement timeout),
    // not a wait: the test waits only for the timeout.
    const slow = source({
      statementTimeoutMs: 200,
      streams: {
        accounts: {
          ...streams().accounts,
          query: `${streams().accounts.query} where pg_sleep(2) is not null`,
        },
      },
    });
    const slowError = (await drain(slow.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(slowError.code).toBe('SQL_STATEMENT_TIMEOUT');
    expect(slowError.retryable).toBe(true);
    expect(await cursors.get('billing-db', 'accounts')).toBeNull();
  });

  it('when the URL variable is unset or the database unreachable, then the source says so before any unit', async () => {
    expect(() =>
      createSqlSource({
        config: { id: 'x', urlEnv: 'NOPE_URL', streams: { accounts: streams().accounts } },
        cursors,
        logger,
        env,
      }),
    ).toThrow(/NOPE_URL \(urlEnv\) is not set/);
    const unreachable = createSqlSource({
      config: { id: 'x', urlEnv: 'U', streams: { accounts: streams().accounts } },
      cursors,
      logger,
      env: { U: 'postgres://nobody@127.0.0.1:1/none' },
    });
    const error = (await drain(unreachable.units()).catch((e: unknown) => e)) as SqlSourceError;
    expect(error.code).toBe('SQL_CONNECT_FAILED');
    expect(error.retryable).toBe(true);
  });
});
