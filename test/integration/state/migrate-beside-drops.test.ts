import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStateDatabase } from '../../../src/state/database.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

// Several installs (or test files) share one Postgres database, each in its own schema. While one
// is dropped, another one's first migration must still go through: kysely's Migrator lists every
// schema's tables before it migrates, and that listing fails for a schema dropped under it (the CI
// run of 2026-11-27 failed so: `state DB migration unknown failed: schema "t_sync_…" does not exist`).
describe('a first migration while another schema of the database is being dropped', () => {
  const created: string[] = [];
  afterAll(async () => {
    for (const schema of created) await dropSchema(schema);
  });

  it('migrates every fresh schema though others come and go meanwhile', async () => {
    const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await churn.connect();
    let stop = false;
    let dropped = 0;
    const churning = (async () => {
      while (!stop) {
        const other = uniqueSchema('churn');
        const columns = Array.from({ length: 40 }, (_, i) => `c${i} serial`).join(', ');
        await churn.query(`create schema "${other}"; create table "${other}".t (${columns})`);
        await churn.query(`drop schema "${other}" cascade`);
        dropped++;
      }
    })();
    try {
      for (let i = 0; i < 12; i++) {
        const schema = uniqueSchema('fresh');
        created.push(schema);
        const state = await openStateDatabase({
          databaseUrl: TEST_DATABASE_URL,
          dataDir: '/tmp/unused',
          schema,
        });
        const tables = await churn.query(
          `select count(*)::int as n from information_schema.tables where table_schema = $1`,
          [schema],
        );
        await state.close();
        expect(tables.rows[0].n).toBeGreaterThan(5);
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
    expect(dropped).toBeGreaterThan(0);
  });
});
