import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';
import { Kysely, PGliteDialect } from 'kysely';
import type { StateDb } from './database.js';
import { lockEmbeddedFolder } from './embedded-lock.js';
import { extractTemplate } from './embedded-template.js';
import type { StateSchema } from './schema.js';

/**
 * PGlite's start parameters, tuned for a state DB of a few hundred thousand rows in one process:
 * 16 MB of shared buffers instead of 128 MB (the WASM heap never shrinks, so what Postgres touches
 * once stays resident; the OS page cache still holds the files), and a small maintenance memory
 * for the `VACUUM (ANALYZE)` after a large pass. That ANALYZE samples 300 rows per unit of
 * statistics target: with Postgres's 100, all 10,500 rows of a first sync's record map, 10 MB more
 * WebAssembly memory at the pass's end (the process's peak); with 10, 3,000 rows and 3 MB. The
 * statistics are what the planner needs here (the table's size, to choose the index), not
 * histograms. PGlite's own defaults (single user, no fsync, no parallel workers) are kept.
 */
export const EMBEDDED_SETTINGS = [
  'shared_buffers=16MB',
  'maintenance_work_mem=16MB',
  'temp_buffers=4MB',
  'default_statistics_target=10',
];

/**
 * Keeps WebAssembly compiled after this on V8's baseline compiler (Liftoff). By default V8 recompiles
 * the hot functions of PGlite's 9 MB module with its optimising compiler (TurboFan) in the
 * background, which costs more than it brings back: a 10,500-record unchanged re-run in a process of
 * its own peaked at 772–778 MB with a 525–564 ms pass, against 241–242 MB and 266–277 ms on Liftoff,
 * and a long-lived process's passes ran as fast either way (docs/performance.md). Both flags are
 * needed (either alone changes nothing). V8 reads them when a module is compiled, so they are set
 * before PGlite compiles its own (Node documents flags set after start-up as not guaranteed; these
 * are read at each compilation); they apply to the process's later WebAssembly too (Node's fetch
 * parser among them; its share of the API calls' cost was not measured apart).
 */
function keepWasmOnBaselineTier(): void {
  v8.setFlagsFromString('--no-wasm-tier-up');
  v8.setFlagsFromString('--no-wasm-dynamic-tiering');
}

/** How the data folder came to be: already there, extracted from the template, or made by `initdb`. */
export type EmbeddedOrigin = 'existing' | 'template' | 'initdb';

export interface EmbeddedDatabase {
  db: StateDb;
  origin: EmbeddedOrigin;
  close(): Promise<void>;
}

export interface OpenEmbeddedProps {
  dataDir: string;
  /** The template file; default `src/state/embedded-template.tar.br`; null = always `initdb`. */
  template?: string | null;
}

/**
 * Opens (and creates when needed) the PGlite database under `<dataDir>/state-db`. A new one is
 * extracted from the template when there is one; should PGlite not start from it (a PGlite whose
 * Postgres changed its on-disk format), the folder is made again by `initdb`, as without one.
 * PGlite is loaded only here, so a process on Postgres never loads its 15 MB of WASM.
 *
 * PGlite serves one process: the folder is locked (`<dataDir>/state-db.lock`) before anything in it
 * is read or made, until `close()`; a second process (or a second open in this one) gets
 * `STATE_DB_IN_USE` (see `lockEmbeddedFolder`).
 */
export async function openEmbeddedDatabase(props: OpenEmbeddedProps): Promise<EmbeddedDatabase> {
  const folder = join(props.dataDir, 'state-db');
  mkdirSync(props.dataDir, { recursive: true });
  const lock = await lockEmbeddedFolder(props.dataDir);
  try {
    const { db, origin } = await openLocked(folder, props.template);
    return {
      db,
      origin,
      close: async () => {
        try {
          await db.destroy();
        } finally {
          await lock.release();
        }
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}

/** Opens (and creates when needed) the PGlite folder; the caller holds its lock. */
async function openLocked(
  folder: string,
  template: string | null | undefined,
): Promise<{ db: StateDb; origin: EmbeddedOrigin }> {
  keepWasmOnBaselineTier();
  const { PGlite } = await import('@electric-sql/pglite');
  const options = {
    startParams: [...PGlite.defaultStartParams, ...EMBEDDED_SETTINGS.flatMap((s) => ['-c', s])],
  };
  let origin: EmbeddedOrigin = 'existing';
  if (!existsSync(join(folder, 'PG_VERSION'))) {
    // An empty folder (made by hand, or left by a version that made it first) is as good as none.
    if (existsSync(folder) && readdirSync(folder).length === 0) rmSync(folder, { recursive: true });
    const fresh = !existsSync(folder) && template !== null;
    origin = fresh && tryTemplate(folder, template ?? undefined) ? 'template' : 'initdb';
  }
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite = await PGlite.create(folder, options);
  } catch (error) {
    if (origin !== 'template') throw error;
    rmSync(folder, { recursive: true, force: true });
    origin = 'initdb';
    pglite = await PGlite.create(folder, options);
  }
  return { db: new Kysely<StateSchema>({ dialect: new PGliteDialect({ pglite }) }), origin };
}

/** Extracts the template; a damaged one (cut short, not brotli, not tar) is as good as none. */
function tryTemplate(folder: string, file: string | undefined): boolean {
  try {
    return extractTemplate(folder, file);
  } catch {
    return false;
  }
}
