import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openStateDatabase } from '../../../src/state/database.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { tcpGate } from '../../support/tcp-gate.js';

const TABLES = [
  'credentials',
  'cursors',
  'drop_files',
  'failures',
  'pending_writes',
  'reconciliations',
  'record_map',
  'run_logs',
  'run_records',
  'runs',
  'sources',
];

describe('state DB', () => {
  // A fresh schema and data folder per test: no test reads what another one wrote.
  let schema: string;
  let dataDir: string;
  beforeEach(() => {
    schema = uniqueSchema('state_db');
    dataDir = mkdtempSync(join(tmpdir(), 'rs-state-'));
  });
  afterEach(async () => {
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each([
    ['postgres', () => ({ databaseUrl: TEST_DATABASE_URL, dataDir, schema })],
    ['embedded', () => ({ databaseUrl: null, dataDir })],
  ] as const)(
    'when opened as %s, then the migrations create every table and a second run applies none',
    async (kind, propsOf) => {
      const props = propsOf();
      const state = await openStateDatabase(props);
      try {
        expect(state.kind).toBe(kind);
        const result = await sql<{ table_name: string }>`
        select table_name from information_schema.tables
        where table_schema = current_schema() and table_name not like 'kysely_%' order by table_name`.execute(
          state.db,
        );
        expect(result.rows.map((r) => r.table_name)).toEqual(TABLES);
        expect(await migrateToLatest(state.db, 'schema' in props ? props.schema : 'public')).toEqual([]);
        await state.db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
        const row = await state.db.selectFrom('sources').selectAll().executeTakeFirstOrThrow();
        expect(row.paused).toBe(false);
      } finally {
        await state.close();
      }
    },
  );

  it('when the embedded DB is reopened, then its data is still there', async () => {
    const first = await openStateDatabase({ databaseUrl: null, dataDir });
    try {
      await first.db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
    } finally {
      await first.close();
    }
    const again = await openStateDatabase({ databaseUrl: null, dataDir });
    try {
      expect(await again.db.selectFrom('sources').select('id').execute()).toEqual([{ id: 'erp-csv' }]);
    } finally {
      await again.close();
    }
  });

  it('when Postgres refuses connections at first (a restart), then opening waits through the retry waits and connects; with none, or a database that does not exist, it fails at once', async () => {
    const url = new URL(TEST_DATABASE_URL);
    const gate = await tcpGate({ host: url.hostname, port: Number(url.port || 5432) });
    const through = (database = url.pathname) =>
      `postgres://${url.username}@127.0.0.1:${gate.port}${database}`;
    try {
      // Shut: nothing listens on the gate's port, as while the server restarts.
      await expect(
        openStateDatabase({ databaseUrl: through(), dataDir, schema, connectRetryDelaysMs: [] }),
      ).rejects.toThrow(/ECONNREFUSED/);

      const opening = openStateDatabase({
        databaseUrl: through(),
        dataDir,
        schema,
        connectRetryDelaysMs: [200, 200, 200, 200, 200],
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await gate.open();
      const state = await opening;
      try {
        expect(await state.db.selectFrom('sources').select('id').execute()).toEqual([]);
      } finally {
        await state.close();
      }

      // Not a connection lost: the server answered, and no wait would change its answer.
      const started = Date.now();
      await expect(
        openStateDatabase({
          databaseUrl: through('/no_such_database_here'),
          dataDir,
          schema,
          connectRetryDelaysMs: [5_000],
        }),
      ).rejects.toThrow(/does not exist/);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await gate.shut();
    }
  });
});
