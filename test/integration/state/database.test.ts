import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateToLatest, openStateDatabase } from '../../../src/state/database.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

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
});
