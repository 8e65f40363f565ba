/**
 * Rebuilds `src/state/embedded-template.tar.br`, the data folder a new embedded state DB starts
 * from: PGlite's `initdb`, then every migration of `migrations/`. Run it after adding a migration
 * or upgrading PGlite (test/integration/state/embedded-template.test.ts fails until then):
 *
 *   npx tsx scripts/build-embedded-template.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { migrateToLatest } from '../src/state/database.js';
import { openEmbeddedDatabase } from '../src/state/embedded-database.js';
import {
  migrationsDigest,
  TEMPLATE_FILE_NAME,
  TEMPLATE_MIGRATIONS_FILE_NAME,
  writeTemplate,
} from '../src/state/embedded-template.js';

const dataDir = mkdtempSync(join(tmpdir(), 'rs-embedded-template-'));
try {
  const embedded = await openEmbeddedDatabase({ dataDir, template: null });
  let applied: string[];
  try {
    applied = await migrateToLatest(embedded.db);
    // The state DB lives in the \`postgres\` database; \`initdb\`'s two template databases are 600 of
    // the folder's 1,040 files, and a new data folder's cost is mostly creating files (0.1–0.7 ms
    // each, by disk). Nothing here creates a database, so they go.
    for (const name of ['template0', 'template1']) {
      await sql.raw(`ALTER DATABASE ${name} IS_TEMPLATE false`).execute(embedded.db);
      await sql.raw(`DROP DATABASE ${name}`).execute(embedded.db);
    }
    // What initdb and the migrations wrote is 8 MB of WAL that nothing will replay: a switch to a
    // new segment and a checkpoint remove the old segment (not recycled: a recycled one keeps its
    // bytes), so the folder's one segment holds the checkpoints alone, one written page that the
    // archive keeps without its zero tail.
    await sql`SET wal_recycle = off`.execute(embedded.db);
    await sql`SELECT pg_switch_wal()`.execute(embedded.db);
    await sql`CHECKPOINT`.execute(embedded.db);
  } finally {
    await embedded.close();
  }
  const file = join(import.meta.dirname, '..', 'src', 'state', TEMPLATE_FILE_NAME);
  const bytes = writeTemplate(join(dataDir, 'state-db'), file);
  const sidecar = join(import.meta.dirname, '..', 'src', 'state', TEMPLATE_MIGRATIONS_FILE_NAME);
  writeFileSync(sidecar, `${JSON.stringify(await migrationsDigest(), null, 2)}\n`);
  console.log(`${file}: ${bytes} bytes, ${applied.length} migrations (${applied.at(-1)})`);
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
