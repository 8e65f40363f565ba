import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import pg from 'pg';
import { AppError } from '../domain/errors.js';
import { type EmbeddedOrigin, openEmbeddedDatabase } from './embedded-database.js';
import { checkFreeSpace, DEFAULT_MIN_FREE_MB } from './embedded-space.js';
import type { StateSchema } from './schema.js';
import { scopedToSchema } from './schema-introspector.js';
import { StateCalls } from './state-calls.js';

export type StateDb = Kysely<StateSchema>;

export interface StateDatabase {
  db: StateDb;
  /** `postgres` when DATABASE_URL is set, `embedded` (PGlite under the data dir) otherwise. */
  kind: 'postgres' | 'embedded';
  /** Embedded only: how its data folder came to be (see `openEmbeddedDatabase`). */
  origin?: EmbeddedOrigin;
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
  /** The migrations folder (tests); default `migrations/`. */
  migrationsFolder?: string;
  /**
   * Told of an idle connection the server dropped (a restart, a failover, `pg_terminate_backend`).
   * The pool discards that connection and the next query opens a new one. Default: ignored (never
   * an unhandled `error` event).
   */
  onIdleError?: (error: Error) => void;
  /**
   * Postgres only: the waits before each new attempt to connect when the first ones find the
   * server not accepting connections yet (a restart under way: ECONNREFUSED, "the database system
   * is starting up"). Default `CONNECT_RETRY_DELAYS_MS`; `[]` fails at once.
   */
  connectRetryDelaysMs?: readonly number[] | undefined;
  /** Embedded only: the MB that must stay free on `dataDir`'s disk (`embedded-space.ts`); default 64. */
  minFreeMb?: number;
}

/**
 * 0.25 + 0.5 + 1 + 2 s: a Postgres coming back from a restart gets about 4 s to accept connections
 * before the command fails (`STATE_DB_UNAVAILABLE`), and a server that is down stays quick to report.
 */
export const CONNECT_RETRY_DELAYS_MS: readonly number[] = [250, 500, 1_000, 2_000];

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
    await checkFreeSpace(props.dataDir, props.minFreeMb ?? DEFAULT_MIN_FREE_MB);
    const embedded = await openEmbeddedDatabase({ dataDir: props.dataDir });
    state = { db: embedded.db, kind: 'embedded', origin: embedded.origin, close: embedded.close };
  }
  try {
    // The first statement, sent again while the server does not take the connection (the causes the
    // repositories retry); any other error, such as a database that does not exist, fails at once,
    // as the driver threw it. `select 1` changes nothing, so repeating it is always safe.
    if (state.kind === 'postgres') {
      const connecting = new StateCalls({
        delaysMs: props.connectRetryDelaysMs ?? CONNECT_RETRY_DELAYS_MS,
        restate: false,
      });
      await connecting.retried('connect', () => sql`select 1`.execute(state.db));
    }
    if (schema !== 'public') await sql`create schema if not exists ${sql.id(schema)}`.execute(state.db);
    if (props.migrate ?? true) await migrateToLatest(state.db, schema, props.migrationsFolder);
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
    const migrations: Record<string, Migration> = {};
    for (const { name, file } of await migrationFiles(this.folder)) {
      migrations[name] = (await import(pathToFileURL(file).href)) as Migration;
    }
    return migrations;
  }
}

/** The migrations of `folder` by name order: `.ts` files in a checkout, `.js` once built. */
async function migrationFiles(folder: string): Promise<{ name: string; file: string }[]> {
  const ext = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  const files = (await readdir(folder)).filter((f) => f.endsWith(ext) && !f.endsWith('.d.ts')).sort();
  return files.map((f) => ({ name: f.slice(0, -ext.length), file: join(folder, f) }));
}

/**
 * Whether the schema has exactly the migrations of `folder`, in the same order: two queries and a
 * folder listing, where the Migrator would import every migration, create its tables if missing,
 * and take and release its lock (about 0.1 s on the embedded DB). Anything else (none applied,
 * some pending, one unknown to this version) is for the Migrator to apply or refuse.
 */
export async function schemaIsCurrent(
  db: StateDb,
  schema = 'public',
  folder = MIGRATIONS_DIR,
): Promise<boolean> {
  const table = `${schema}.${DEFAULT_MIGRATION_TABLE}`;
  const found = await sql<{
    present: boolean;
  }>`select to_regclass(${`"${schema}".${DEFAULT_MIGRATION_TABLE}`}) is not null as present`.execute(db);
  if (!found.rows[0]?.present) return false;
  const rows = await sql<{ name: string }>`select name from ${sql.table(table)}`.execute(db);
  // Sorted here as the folder is (by code unit), not by the database's collation.
  const applied = rows.rows.map((row) => row.name).sort();
  const expected = (await migrationFiles(folder)).map((m) => m.name);
  return applied.length === expected.length && applied.every((name, i) => name === expected[i]);
}

/** A migration of the state DB failed: nothing can run until it is fixed. */
export class MigrationError extends AppError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('STATE_DB_MIGRATION_FAILED', message, { cause: options.cause });
  }
}

/**
 * Applies pending migrations. The migration tables live in `schema` too: without it, kysely would
 * take another schema's `kysely_migration_lock` for this one's; and the Migrator sees that schema
 * alone (`scopedToSchema`), not the database's others, which may be dropped while it looks.
 */
export async function migrateToLatest(
  db: StateDb,
  schema = 'public',
  folder = MIGRATIONS_DIR,
): Promise<string[]> {
  if (await schemaIsCurrent(db, schema, folder)) return [];
  const migrator = new Migrator({
    db: scopedToSchema(db, schema),
    provider: new FolderMigrationProvider(folder),
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
