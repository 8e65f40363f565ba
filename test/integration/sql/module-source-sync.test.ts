import { resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import { createModuleSource } from '../../../src/sources/module/index.js';
import { CursorsRepository } from '../../../src/state/cursors.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { type SyncStateRepos, syncStateRepos } from '../../../src/state/repositories.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const logger = pino({ level: 'silent' });
const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

describe('the example module source through the sync engine', () => {
  let sandbox: TestSandbox;
  let state: StateDatabase;
  let stateSchema: string;
  let repos: SyncStateRepos;
  let cursors: CursorsRepository;
  let client: ReceivablesClient;

  const pass = () =>
    runSync({
      source: createModuleSource({
        config: {
          id: 'json-example',
          module: './examples/module-source/json-file-source.js',
          options: { batchSize: 2 },
        },
        cursors,
        logger,
        baseDir: resolve('.'),
      }),
      connectionId: 'json-example',
      api: new ClientSyncApi(client, sandbox.organizationId),
      state: repos,
      logger,
    });

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    stateSchema = uniqueSchema('module_state');
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
  });

  it('when it runs, then its records are created and its cursors stored; the next pass has nothing to read', async () => {
    const first = await pass();
    expect(first.failures).toEqual([]);
    expect(first.counts).toEqual({
      accounts: { ...zero, created: 3 },
      invoices: { ...zero, created: 3 },
      creditNotes: { ...zero, created: 1 },
    });
    expect((await cursors.list('json-example')).map((c) => [c.stream, c.cursor?.records])).toEqual([
      ['accounts', 3],
      ['creditNotes', 1],
      ['invoices', 3],
    ]);
    const invoices = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: 'sourceId:isAnyOf:F-2026-002' },
    });
    expect(invoices.status).toBe(200);

    const second = await pass();
    expect(second.counts).toEqual({ accounts: zero, invoices: zero, creditNotes: zero });
    expect(client.stats.requests).toBeGreaterThan(0);
  });
});
