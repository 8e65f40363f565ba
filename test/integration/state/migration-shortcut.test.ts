import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  MigrationError,
  migrateToLatest,
  type OpenStateProps,
  openStateDatabase,
  schemaIsCurrent,
} from '../../../src/state/database.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

const MIGRATIONS = join(import.meta.dirname, '..', '..', '..', 'migrations');

/** Whether a table exists in the state DB's schema. */
async function hasTable(
  db: Awaited<ReturnType<typeof openStateDatabase>>['db'],
  schema: string,
  name: string,
) {
  const found = await sql<{
    present: boolean;
  }>`select to_regclass(${`"${schema}".${name}`}) is not null as present`.execute(db);
  return found.rows[0]!.present;
}

describe.each(['postgres', 'embedded'] as const)('the migration check on open (%s)', (kind) => {
  let schema: string;
  let dataDir: string;
  let props: OpenStateProps;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'rs-migrations-'));
    schema = kind === 'postgres' ? uniqueSchema('migration_check') : 'public';
    props =
      kind === 'postgres'
        ? { databaseUrl: TEST_DATABASE_URL, dataDir, schema }
        : { databaseUrl: null, dataDir };
  });
  afterEach(async () => {
    if (kind === 'postgres') await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs `change` on the state DB opened without migrating. */
  async function tamper(
    change: (db: Awaited<ReturnType<typeof openStateDatabase>>['db']) => Promise<unknown>,
  ) {
    const state = await openStateDatabase({ ...props, migrate: false });
    try {
      await change(state.db);
    } finally {
      await state.close();
    }
  }

  it('when the schema is current, then opening runs no Migrator and keeps the data', async () => {
    const first = await openStateDatabase(props);
    try {
      await first.db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
    } finally {
      await first.close();
    }
    // The Migrator creates its lock table whenever it runs: without it, it did not.
    await tamper((db) => sql`drop table ${sql.table(`${schema}.kysely_migration_lock`)}`.execute(db));

    const again = await openStateDatabase(props);
    try {
      expect(await hasTable(again.db, schema, 'kysely_migration_lock')).toBe(false);
      expect(await schemaIsCurrent(again.db, schema)).toBe(true);
      expect(await again.db.selectFrom('sources').select('id').execute()).toEqual([{ id: 'erp-csv' }]);
    } finally {
      await again.close();
    }
  });

  it('when a migration file is added, then the next open applies it, and an older version refuses the DB', async () => {
    await (await openStateDatabase(props)).close();
    // The same migrations (linked, so they resolve `kysely` from the checkout) and a new one.
    const folder = join(dataDir, 'migrations');
    mkdirSync(folder);
    for (const name of readdirSync(MIGRATIONS)) symlinkSync(join(MIGRATIONS, name), join(folder, name));
    writeFileSync(
      join(folder, '29991231_0001_extra.ts'),
      `export async function up(db: any) {
  await db.schema.createTable('extra').addColumn('id', 'text').execute();
}
export async function down(db: any) {
  await db.schema.dropTable('extra').execute();
}
`,
    );

    const state = await openStateDatabase({ ...props, migrationsFolder: folder });
    try {
      expect(await hasTable(state.db, schema, 'extra')).toBe(true);
      expect(await schemaIsCurrent(state.db, schema, folder)).toBe(true);
      // The version without that file: not current, and the Migrator names what it does not know.
      expect(await schemaIsCurrent(state.db, schema)).toBe(false);
      const refused = await migrateToLatest(state.db, schema).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(MigrationError);
      expect((refused as MigrationError).code).toBe('STATE_DB_MIGRATION_FAILED');
      expect((refused as Error).message).toContain('29991231_0001_extra');
    } finally {
      await state.close();
    }
  });

  it('when a migration was half applied (its columns there, its record gone), then opening fails naming it', async () => {
    await (await openStateDatabase(props)).close();
    await tamper((db) =>
      sql`delete from ${sql.table(`${schema}.kysely_migration`)} where name >= '20261124_0005'`.execute(db),
    );

    const failed = await openStateDatabase(props).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(MigrationError);
    expect((failed as Error).message).toMatch(
      /state DB migration 20261124_0005_source_pause_reason failed: .*pause_reason.* already exists/,
    );
  });
});
