import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import { createSqlSource } from '../../../src/sources/sql/index.js';
import { CursorsRepository } from '../../../src/state/cursors.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { type SyncStateRepos, syncStateRepos } from '../../../src/state/repositories.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { type BillingDb, billingStreams, createBillingDb, seedBilling } from './billing-fixture.js';

const logger = pino({ level: 'silent' });
const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

describe('SQL source through the sync engine, against the sandbox API', () => {
  let billing: BillingDb;
  let sandbox: TestSandbox;
  let state: StateDatabase;
  let stateSchema: string;
  let repos: SyncStateRepos;
  let cursors: CursorsRepository;
  let client: ReceivablesClient;

  const pass = async () => {
    const source = createSqlSource({
      config: {
        id: 'billing-db',
        urlEnv: 'BILLING_URL',
        streams: billingStreams(billing.schema),
        lookbackSeconds: 120,
        batchSize: 25,
      },
      cursors,
      logger,
      env: { BILLING_URL: TEST_DATABASE_URL },
    });
    const requestsBefore = client.stats.requests;
    const summary = await runSync({
      source,
      connectionId: 'billing-db',
      api: new ClientSyncApi(client, sandbox.organizationId),
      state: repos,
      logger,
    });
    return { summary, read: source.lastPass().streams, requests: client.stats.requests - requestsBefore };
  };
  const accountIdOf = async (sourceId: string) =>
    (await repos.recordMap.get('billing-db', 'account', sourceId))!.apiId;

  beforeAll(async () => {
    billing = await createBillingDb('billing_sync');
    await seedBilling(billing, { accounts: 30, invoices: 60, creditNotes: 6 });
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    stateSchema = uniqueSchema('sqlsync_state');
    state = await openStateDatabase({
      databaseUrl: TEST_DATABASE_URL,
      dataDir: '/nonexistent',
      schema: stateSchema,
    });
    repos = syncStateRepos(state.db);
    cursors = new CursorsRepository(state.db);
    client = new ReceivablesClient({
      baseUrl: sandbox.baseUrl,
      tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
      limiter: createRateLimiter({ logger }),
      logger,
    });
  });
  afterAll(async () => {
    await client?.close();
    await sandbox?.close();
    await state?.close();
    await dropSchema(stateSchema);
    await billing?.close();
  });

  it('when the first pass runs, then every row is created once and each stream cursor is stored', async () => {
    const { summary, read } = await pass();
    expect(summary.failures).toEqual([]);
    expect(summary.abandoned).toEqual([]);
    expect(summary.counts).toEqual({
      accounts: { ...zero, created: 30 },
      invoices: { ...zero, created: 60 },
      creditNotes: { ...zero, created: 6 },
    });
    expect([read.accounts?.rowsRead, read.invoices?.rowsRead, read.creditNotes?.rowsRead]).toEqual([
      30, 60, 6,
    ]);
    expect(
      (await cursors.list('billing-db')).map((c) => [
        c.stream,
        (c.cursor?.values as string[] | undefined)?.[1],
      ]),
    ).toEqual([
      ['accounts', '30'],
      ['creditNotes', '6'],
      ['invoices', '60'],
    ]);
    const account = await sandbox.call('GET', `/accounts/${await accountIdOf('7')}`);
    expect(account.body).toMatchObject({
      fullName: 'Customer 7',
      source: { connectionId: 'billing-db', sourceId: '7' },
    });
  });

  it('when a few rows change, then only they are written; the rows re-read in the look-back cost no API call', async () => {
    await billing.sql(
      `update $schema.customers set name = 'Renamed ' || id, updated_at = now() where id in (3, 11, 19)`,
    );
    await billing.sql(`update $schema.invoices set paid = total, updated_at = now() where id in (4, 40)`);
    const { summary, read } = await pass();
    expect(summary.failures).toEqual([]);
    // The look-back (120 s) re-reads the last seeded rows: 3 accounts, 13 invoices, 1 credit note.
    expect(read.accounts?.rowsRead).toBe(3 + 3);
    expect(read.invoices?.rowsRead).toBe(2 + 13);
    expect(read.creditNotes?.rowsRead).toBe(1);
    expect(summary.counts).toEqual({
      accounts: { ...zero, updated: 3, unchanged: 3 },
      invoices: { ...zero, updated: 2, unchanged: 13 },
      creditNotes: { ...zero, unchanged: 1 },
    });
    const renamed = await sandbox.call('GET', `/accounts/${await accountIdOf('11')}`);
    expect(renamed.body.fullName).toBe('Renamed 11');
  });

  it("when a customer row becomes a tombstone, then the account's source is unlinked, never the account deleted", async () => {
    await billing.sql(`update $schema.customers set deleted = true, updated_at = now() where id = 5`);
    const { summary } = await pass();
    expect(summary.failures).toEqual([]);
    expect(summary.counts.accounts).toMatchObject({ updated: 1, failed: 0 });
    const account = await sandbox.call('GET', `/accounts/${await accountIdOf('5')}`);
    expect(account.status).toBe(200);
    expect(account.body.source).toBeNull();
    expect(account.body.lastUnlinkedSource).toMatchObject({ connectionId: 'billing-db', sourceId: '5' });

    // Read again inside the look-back, the tombstone is unchanged: no second unlink.
    const again = await pass();
    expect(again.summary.failures).toEqual([]);
    expect(again.summary.counts.accounts).toMatchObject({ updated: 0, failed: 0 });
  });
});
