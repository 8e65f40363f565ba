import { mkdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import pg from 'pg';
import { AppError } from '../domain/errors.js';
import type { StateSchema } from './schema.js';

export type StateDb = Kysely<StateSchema>;

export interface StateDatabase {
  db: StateDb;
  /** `postgres` when DATABASE_URL is set, `embedded` (PGlite under the data dir) otherwise. */
  kind: 'postgres' | 'embedded';
  close(): Promise<void>;
}

export interface OpenStateProps {
  /** Postgres URL; null = the embedded database under `dataDir`. */
  databaseUrl: string | null;
  dataDir: string;
  /** Postgres schema to use (tests isolate each file in its own); default `public`. */
  schema?: string;
  /** Apply pending migrations on open (default true). */
  migrate?: boolean;
  /**
   * Told of an idle connection the server dropped (a restart, a failover, `pg_terminate_backend`).
   * The pool discards that connection and the next query opens a new one. Default: ignored (never
   * an unhandled `error` event).
   */
  onIdleError?: (error: Error) => void;
}

/** Opens the state DB and applies its migrations. The same migrations and queries run on both kinds. */
export async function openStateDatabase(props: OpenStateProps): Promise<StateDatabase> {
  const schema = props.schema ?? 'public';
  let state: StateDatabase;
  if (props.databaseUrl) {
    if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid state DB schema name "${schema}"`);
    const pool = new pg.Pool({
      connectionString: props.databaseUrl,
      max: 10,
      options: `-c search_path=${schema}`,
    });
    pool.on('error', (error) => props.onIdleError?.(error));
    // A client checked out of the pool has no listener of its own between two queries (a
    // transaction, kysely's acquire): the server ending its session there must not end the
    // process. The query under way, if any, fails with the error; the pool drops the dead client
    // when it is released.
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<StateSchema>({ dialect: new PostgresDialect({ pool }) });
    state = { db, kind: 'postgres', close: () => db.destroy() };
  } else {
    mkdirSync(props.dataDir, { recursive: true });
    const pglite = await PGlite.create(join(props.dataDir, 'state-db'));
    const db = new Kysely<StateSchema>({ dialect: new PGliteDialect({ pglite }) });
    state = { db, kind: 'embedded', close: () => db.destroy() };
  }
  try {
    if (schema !== 'public') await sql`create schema if not exists ${sql.id(schema)}`.execute(state.db);
    if (props.migrate ?? true) await migrateToLatest(state.db, schema);
  } catch (error) {
    await state.close();
    throw error;
  }
  return state;
}

/** The folder of migrations: `migrations/*.ts` in a checkout, `dist/migrations/*.js` once built. */
const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

/** Loads `migrations/` files by name order; a file exports `up` and `down`. */
export class FolderMigrationProvider implements MigrationProvider {
  constructor(private readonly folder = MIGRATIONS_DIR) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
    const names = (await readdir(this.folder)).filter((f) => f.endsWith(ext) && !f.endsWith('.d.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const name of names) {
      migrations[name.slice(0, -ext.length)] = (await import(
        pathToFileURL(join(this.folder, name)).href
      )) as Migration;
    }
    return migrations;
  }
}

/** A migration of the state DB failed: nothing can run until it is fixed. */
export class MigrationError extends AppError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('STATE_DB_MIGRATION_FAILED', message, { cause: options.cause, kind: 'infrastructure' });
  }
}

/**
 * Applies pending migrations. The migration tables live in `schema` too: without it, kysely would
 * take another schema's `kysely_migration_lock` for this one's.
 */
export async function migrateToLatest(db: StateDb, schema = 'public'): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: new FolderMigrationProvider(),
    migrationTableSchema: schema,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`state DB migration ${failed} failed: ${(error as Error).message ?? error}`, {
      cause: error,
    });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
