import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStateDatabase, schemaIsCurrent } from '../../../src/state/database.js';
import { openEmbeddedDatabase } from '../../../src/state/embedded-database.js';
import {
  extractTemplate,
  migrationsDigest,
  TEMPLATE_MIGRATIONS_FILE_NAME,
  tarEntries,
  tarFolder,
  templatePath,
  writeTemplate,
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

  it('when the template is read, then its WAL segment holds the checkpoints alone, without 16 MB of zeros to write', () => {
    // If this fails after a rebuild: the build no longer switches to a new WAL segment before its
    // last checkpoint (initdb and the migrations leave 8 MB of WAL nothing replays), or the
    // archive stores zero tails again: a new data folder then decompresses and writes 25 MB.
    const entries = [...tarEntries(brotliDecompressSync(readFileSync(templatePath() ?? '')))];
    const wal = entries.filter((e) => /^pg_wal\/[0-9A-F]{24}$/.test(e.name));
    expect(wal.map((e) => [e.size, (e.data?.length ?? 0) <= 8192])).toEqual([[16 * 1024 * 1024, true]]);
    const stored = entries.reduce((sum, e) => sum + (e.data?.length ?? 0), 0);
    expect(stored).toBeLessThan(12 * 1024 * 1024);
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

  it('when a file ends in a long run of zeros, then the archive leaves them out and extraction gives the file back whole', () => {
    const root = join(dataDir, 'root');
    mkdirSync(join(root, 'pg_wal'), { recursive: true });
    const segment = Buffer.alloc(1024 * 1024);
    segment.write('checkpoint record', 0);
    writeFileSync(join(root, 'pg_wal', '000000010000000000000002'), segment);
    const short = Buffer.concat([Buffer.from('page'), Buffer.alloc(1000)]);
    writeFileSync(join(root, 'PG_VERSION'), short);

    const entries = [...tarEntries(tarFolder(root))].map((e) => [e.name, e.data?.length ?? null, e.size]);
    expect(entries).toEqual([
      ['PG_VERSION', short.length, short.length],
      ['pg_wal', null, 0],
      ['pg_wal/000000010000000000000002', 'checkpoint record'.length, segment.length],
    ]);
    const file = join(dataDir, 'template.tar.br');
    writeTemplate(root, file);
    const target = join(dataDir, 'extracted');
    expect(extractTemplate(target, file)).toBe(true);
    const extracted = join(target, 'pg_wal', '000000010000000000000002');
    expect(statSync(extracted).size).toBe(segment.length);
    expect(readFileSync(extracted).equals(segment)).toBe(true);
    expect(readFileSync(join(target, 'PG_VERSION')).equals(short)).toBe(true);
  });
});
