import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRecord, InvoiceRecord } from '../../../src/domain/records.js';
import { createSqlSource, type SqlSource } from '../../../src/sources/sql/index.js';
import { CursorsRepository } from '../../../src/state/cursors.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { type BillingDb, billingStreams, createBillingDb, drain, seedBilling } from './billing-fixture.js';

const ACCOUNTS = 10_000;
const INVOICES = 50_000;
const LOOKBACK = 300;
const logger = pino({ level: 'silent' });
const env = { BILLING_URL: TEST_DATABASE_URL };

describe('SQL source over a billing database of 10,000 accounts and 50,000 invoices', () => {
  let billing: BillingDb;
  let state: StateDatabase;
  let stateSchema: string;
  let cursors: CursorsRepository;

  const source = (
    id: string,
    options: { lookbackSeconds?: number; fullRefresh?: boolean } = {},
  ): SqlSource => {
    const { accounts, invoices } = billingStreams(billing.schema);
    return createSqlSource({
      config: {
        id,
        urlEnv: 'BILLING_URL',
        streams: { accounts, invoices },
        batchSize: 1000,
        lookbackSeconds: LOOKBACK,
        ...options,
      },
      cursors,
      logger,
      env,
    });
  };
  /** Rows of a table whose updated_at is inside the look-back window before a cursor timestamp. */
  const windowRows = async (table: string, cursorTs: string, lookback = LOOKBACK) => {
    const [row] = await billing.sql<{ n: string }>(
      `select count(*) as n from $schema.${table} where updated_at >= $1::timestamptz - make_interval(secs => $2)`,
      [cursorTs, lookback],
    );
    return Number(row!.n);
  };
  const cursorTs = async (id: string, stream: string) =>
    ((await cursors.get(id, stream))!.values as string[])[0]!;

  beforeAll(async () => {
    billing = await createBillingDb('billing');
    await seedBilling(billing, { accounts: ACCOUNTS, invoices: INVOICES });
    stateSchema = uniqueSchema('sqlstate');
    state = await openStateDatabase({
      databaseUrl: TEST_DATABASE_URL,
      dataDir: '/nonexistent',
      schema: stateSchema,
    });
    cursors = new CursorsRepository(state.db);
  });
  afterAll(async () => {
    await state?.close();
    await dropSchema(stateSchema);
    await billing?.close();
  });

  it('when the first pass runs, then every row is read once in bounded pages and each cursor is the greatest (updated_at, id)', async () => {
    const billingDb = source('billing-db');
    const pass = await drain(billingDb.units());

    expect(pass.units).toEqual(['billing-db/accounts', 'billing-db/invoices']);
    expect(pass.rejected).toEqual([]);
    expect(pass.records.accounts).toHaveLength(ACCOUNTS);
    expect(pass.records.invoices).toHaveLength(INVOICES);
    expect(new Set(pass.records.invoices.map((r) => r.sourceId)).size).toBe(INVOICES);
    expect(pass.largestBatch).toBeLessThanOrEqual(1000);
    const { accounts, invoices } = billingDb.lastPass().streams;
    expect(accounts).toMatchObject({ start: 'start', rowsRead: ACCOUNTS, pages: 11, state: 'completed' });
    expect(invoices).toMatchObject({ start: 'start', rowsRead: INVOICES, pages: 51, state: 'completed' });
    expect(await cursors.get('billing-db', 'accounts')).toEqual({
      kind: 'keyset',
      columns: ['updated_at', 'id'],
      values: ['2026-01-07 22:40:00+00', '10000'],
    });
    expect((await cursors.get('billing-db', 'invoices'))!.values).toEqual([
      '2026-01-06 18:53:20+00',
      '50000',
    ]);

    const account = pass.records.accounts.find((r) => r.sourceId === '10') as AccountRecord;
    expect(account).toEqual({
      kind: 'account',
      sourceId: '10',
      fullName: 'Customer 10',
      currencyCode: 'EUR',
      billingAddress: { street: '10 rue de la Paix', city: 'Paris', postalCode: '75010', country: 'FR' },
      tags: ['vip'],
      updatedAt: '2026-01-01T00:10:00.000Z',
    });
    const invoice = pass.records.invoices.find((r) => r.sourceId === 'INV-3') as InvoiceRecord;
    expect(invoice).toMatchObject({
      accountSourceId: '3',
      number: 'INV-000003',
      issuedDate: { year: 2025, month: 1, day: 4 },
      dueDate: { year: 2025, month: 2, day: 3 },
      totalAmount: '103.50',
      taxAmount: '20.70',
      paidAmount: '10.00',
      billingAddress: null,
      file: null,
      updatedAt: '2026-01-01T00:00:30.000Z',
    });
  });

  it('when 100 accounts and 100 invoices change, then the next pass reads only them and the rows of the look-back window', async () => {
    // A second source starts from the same cursors without a look-back: its count is the changed rows alone.
    for (const stream of ['accounts', 'invoices'])
      await cursors.set('billing-exact', stream, (await cursors.get('billing-db', stream))!);
    const before = {
      accounts: await cursorTs('billing-db', 'accounts'),
      invoices: await cursorTs('billing-db', 'invoices'),
    };
    await billing.sql(
      `update $schema.customers set name = name || ' (renamed)', updated_at = '2026-03-01 12:00:00+00' where id % 100 = 7`,
    );
    await billing.sql(
      `update $schema.invoices set paid = total, updated_at = '2026-03-01 12:00:00+00' where id % 500 = 11`,
    );

    const billingDb = source('billing-db');
    const pass = await drain(billingDb.units());
    const { accounts, invoices } = billingDb.lastPass().streams;
    const windowAccounts = await windowRows('customers', before.accounts);
    const windowInvoices = await windowRows('invoices', before.invoices);
    // The window holds the 100 changed rows (now after the cursor) and the last seeded rows, read again.
    expect(windowAccounts).toBe(100 + 5 + 1);
    expect(windowInvoices).toBe(100 + 30 + 1);
    expect(accounts).toMatchObject({ start: 'since', rowsRead: windowAccounts });
    expect(invoices).toMatchObject({ start: 'since', rowsRead: windowInvoices });
    const renamed = pass.records.accounts.filter((r) => (r as AccountRecord).fullName.endsWith('(renamed)'));
    expect(renamed.map((r) => Number(r.sourceId)).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 100 }, (_, i) => i * 100 + 7),
    );
    expect(pass.records.invoices.filter((r) => r.updatedAt === '2026-03-01T12:00:00.000Z')).toHaveLength(100);

    const exact = source('billing-exact', { lookbackSeconds: 0 });
    await drain(exact.units());
    expect(exact.lastPass().streams.accounts).toMatchObject({ start: 'after', rowsRead: 100 });
    expect(exact.lastPass().streams.invoices).toMatchObject({ start: 'after', rowsRead: 100 });
    expect((await cursors.get('billing-db', 'accounts'))!.values).toEqual(['2026-03-01 12:00:00+00', '9907']);
    expect((await cursors.get('billing-exact', 'invoices'))!.values).toEqual([
      '2026-03-01 12:00:00+00',
      '49511',
    ]);

    const again = source('billing-exact', { lookbackSeconds: 0 });
    await drain(again.units());
    expect(again.lastPass().streams.accounts!.rowsRead).toBe(0);
    expect(again.lastPass().streams.invoices!.rowsRead).toBe(0);
  });

  it("when one stream's cursor is reset, then only that stream is read from its start and the other keeps its cursor", async () => {
    const accountsBefore = await cursors.get('billing-exact', 'accounts');
    expect(await cursors.reset('billing-exact', 'invoices')).toEqual(['invoices']);
    expect(await cursors.get('billing-exact', 'accounts')).toEqual(accountsBefore);
    expect(await cursors.get('billing-exact', 'invoices')).toBeNull();
    expect((await cursors.list('billing-exact')).map((c) => [c.stream, c.cursor === null])).toEqual([
      ['accounts', false],
      ['invoices', true],
    ]);

    const exact = source('billing-exact', { lookbackSeconds: 0 });
    await drain(exact.units());
    expect(exact.lastPass().streams.accounts).toMatchObject({ start: 'after', rowsRead: 0 });
    expect(exact.lastPass().streams.invoices).toMatchObject({ start: 'start', rowsRead: INVOICES });
    expect(await cursors.get('billing-exact', 'accounts')).toEqual(accountsBefore);
  });

  it('when fullRefresh is set, then every row is read on every pass, and the cursor is still stored', async () => {
    const full = source('billing-full', { fullRefresh: true });
    await drain(full.units());
    await drain(full.units());
    expect(full.lastPass().streams.accounts).toMatchObject({ start: 'start', rowsRead: ACCOUNTS });
    expect(full.lastPass().streams.invoices).toMatchObject({ start: 'start', rowsRead: INVOICES });
    expect(((await cursors.get('billing-full', 'invoices'))!.values as string[])[1]).toBe('49511');
  });

  it('when a pass is released (dry run) or abandoned, then the cursors stay as they were', async () => {
    const before = await cursors.list('billing-db');
    await billing.sql(`update $schema.customers set updated_at = '2026-04-01 00:00:00+00' where id = 1`);
    await drain(source('billing-db').units(), 'release');
    await drain(source('billing-db').units(), 'abandon');
    expect(await cursors.list('billing-db')).toEqual(before);
  });
});
