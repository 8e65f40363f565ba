import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateDatabase, schemaIsCurrent } from '../../../src/state/database.js';
import { openEmbeddedDatabase } from '../../../src/state/embedded-database.js';
import {
  migrationsDigest,
  TEMPLATE_MIGRATIONS_FILE_NAME,
  tarEntries,
  tarFolder,
} from '../../../src/state/embedded-template.js';

const STATE_DIR = join(import.meta.dirname, '..', '..', '..', 'src', 'state');

describe('the embedded state DB template', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'rs-template-'));
  });
  afterEach(() => {
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('when a new data folder is opened, then it comes from the template with every migration applied', async () => {
    const state = await openStateDatabase({ databaseUrl: null, dataDir, migrate: false });
    try {
      // If this fails: `npx tsx scripts/build-embedded-template.ts` (a migration was added, or
      // PGlite upgraded), then commit src/state/embedded-template.tar.br.
      expect(state.origin).toBe('template');
      expect(await schemaIsCurrent(state.db)).toBe(true);
      await state.db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
      expect(await state.db.selectFrom('sources').select('id').execute()).toEqual([{ id: 'erp-csv' }]);
      // initdb's template databases are not in it: a new folder is 600 files fewer to create.
      const databases = await sql<{ datname: string }>`select datname from pg_database`.execute(state.db);
      expect(databases.rows).toEqual([{ datname: 'postgres' }]);
    } finally {
      await state.close();
    }
    const again = await openStateDatabase({ databaseUrl: null, dataDir });
    try {
      expect(again.origin).toBe('existing');
      expect(await again.db.selectFrom('sources').select('id').execute()).toEqual([{ id: 'erp-csv' }]);
    } finally {
      await again.close();
    }
  });

  it('when the migrations are compared with those the template was built from, then they are the same', () => {
    // If this fails: a migration was added or edited since the template was built. Run
    // `npx tsx scripts/build-embedded-template.ts` and commit src/state/embedded-template.*.
    const built = JSON.parse(readFileSync(join(STATE_DIR, TEMPLATE_MIGRATIONS_FILE_NAME), 'utf8'));
    expect(built).toEqual(migrationsDigest());
  });

  it('when the template is damaged, then the data folder is made by initdb instead', async () => {
    const damaged = join(dataDir, 'damaged.tar.br');
    writeFileSync(damaged, 'not brotli');
    const embedded = await openEmbeddedDatabase({ dataDir: join(dataDir, 'db'), template: damaged });
    try {
      expect(embedded.origin).toBe('initdb');
      expect(await schemaIsCurrent(embedded.db)).toBe(false);
    } finally {
      await embedded.close();
    }
  });

  it('when a folder is archived, then reading the archive gives its folders and files back', () => {
    const root = join(dataDir, 'root');
    mkdirSync(join(root, 'base', '5'), { recursive: true });
    writeFileSync(join(root, 'PG_VERSION'), '18\n');
    writeFileSync(join(root, 'base', '5', '1259'), Buffer.alloc(8192, 7));
    const entries = [...tarEntries(tarFolder(root))].map((e) => [
      e.name,
      e.data === null ? null : e.data.length,
    ]);
    expect(entries).toEqual([
      ['PG_VERSION', 3],
      ['base', null],
      ['base/5', null],
      ['base/5/1259', 8192],
    ]);
  });
});
