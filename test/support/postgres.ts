import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrateToLatest, openStateDatabase, type StateDatabase } from '../../src/state/database.js';

/** The CI machine's Postgres (trust auth); override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name so each test file has its own tables and files run in parallel. */
export const uniqueSchema = (prefix: string) =>
  `t_${prefix.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

/**
 * A state DB in a schema of its own (migrated), dropped by `close`. The migrations run as the
 * daemon's do (`migrateToLatest`): their tables in that schema, the Migrator blind to the others.
 */
export async function openTestState(prefix: string): Promise<StateDatabase & { schema: string }> {
  const schema = uniqueSchema(prefix);
  const state = await openStateDatabase({
    databaseUrl: TEST_DATABASE_URL,
    dataDir: '/tmp/unused',
    schema,
    migrate: false,
  });
  try {
    await migrateToLatest(state.db, schema);
  } catch (error) {
    await state.close();
    throw error;
  }
  return {
    ...state,
    schema,
    close: async () => {
      await state.close();
      await dropSchema(schema);
    },
  };
}

/**
 * A migrated state DB of either kind for a `describe.each(['postgres', 'embedded'])` file: Postgres
 * in a schema of its own, or the embedded DB in a temp folder; `close` drops the one and removes
 * the other.
 */
export async function openStateOfKind(kind: 'postgres' | 'embedded', prefix: string): Promise<StateDatabase> {
  const schema = uniqueSchema(prefix);
  const dataDir = mkdtempSync(join(tmpdir(), `rs-${prefix}-`));
  const state = await openStateDatabase(
    kind === 'postgres'
      ? { databaseUrl: TEST_DATABASE_URL, dataDir, schema }
      : { databaseUrl: null, dataDir },
  );
  return {
    ...state,
    close: async () => {
      await state.close();
      if (kind === 'postgres') await dropSchema(schema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
