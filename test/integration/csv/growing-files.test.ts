import { appendFile, mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY, type DropWorld, dropWorld } from '../../support/csv-drop-pass.js';

/**
 * A writer that keeps its file open goes on writing into it after a pass claimed it (a pause longer
 * than `stableSeconds`, or `stableSeconds: 0`): the rename into `.processing/` does not stop it. The
 * pass must not archive what it did not read: the file goes back to the drop folder, the pass says
 * so, and the next pass reads it whole. The append is made between reading and settling, through
 * the real source and engine (`beforeSettle`).
 */

const HEADER = 'sourceId,fullName,currencyCode\n';
const rows = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, k) => `ACC-${from + k},Customer ${from + k},EUR\n`).join('');

let world: DropWorld;

beforeEach(async () => {
  world = await dropWorld();
});
afterEach(async () => {
  await world.cleanup();
});

const at = (...parts: string[]) => join(world.dir, ...parts);
const listing = async (...parts: string[]) => (await readdir(at(...parts)).catch(() => [])).sort();
const rootFiles = async () =>
  (await listing()).filter((name) => !['archive', 'rejected', '.processing'].includes(name));
const createdAccounts = () => world.api.writes.filter((write) => write === 'createAccount').length;
/** The writer is done: its file last written an hour ago by the pass's clock (complete at once). */
const writerDone = async (name: string) => {
  const hourAgo = new Date(world.clock.now().getTime() - 3_600_000);
  await utimes(at(name), hourAgo, hourAgo);
};

describe('a file still being written after the pass claimed it', () => {
  it('when rows are appended after the file was read, then it is not archived: back in the drop folder with a warning, and the next pass syncs every row exactly once', async () => {
    await world.drop('accounts.csv', HEADER + rows(1, 36));

    const first = await world.pass({
      beforeSettle: (unit) => appendFile(at('.processing', unit.name), rows(37, 200)),
    });

    expect(first.counts.accounts.created).toBe(36);
    expect(first.warnings).toEqual([
      {
        unit: 'accounts.csv',
        warning: expect.stringMatching(
          /^changed while it was being synced \(it grew from \d+ to \d+ bytes after it was claimed\): still being written\? It went back to the drop folder/,
        ),
      },
    ]);
    expect(world.logLines).toContainEqual(
      expect.objectContaining({
        file: 'accounts.csv',
        msg: expect.stringContaining('file changed after it was claimed'),
      }),
    );
    // Nothing archived, nothing left claimed: the whole file waits in the drop folder.
    expect(await listing('archive', DAY)).toEqual([]);
    expect(await listing('.processing')).toEqual([]);
    expect(await rootFiles()).toEqual(['accounts.csv']);
    expect(await readFile(at('accounts.csv'), 'utf8')).toBe(HEADER + rows(1, 200));

    await writerDone('accounts.csv');
    const second = await world.pass();

    expect(second.counts.accounts).toMatchObject({ created: 164, unchanged: 36, failed: 0 });
    expect(second.warnings).toEqual([]);
    expect(world.api.accounts.size).toBe(200);
    expect(createdAccounts()).toBe(200);
    expect(await readFile(at('archive', DAY, 'accounts.csv'), 'utf8')).toBe(HEADER + rows(1, 200));
    expect(await rootFiles()).toEqual([]);
    expect(await listing('.processing')).toEqual([]);
  });

  it('when rows are appended to a file that read as a duplicate, then it is not archived as one: back in the drop folder, and the next pass syncs the new rows', async () => {
    await world.drop('accounts.csv', HEADER + rows(1, 3));
    await world.pass();
    await world.drop('accounts-2.csv', HEADER + rows(1, 3));

    const duplicate = await world.pass({
      beforeSettle: (unit) => appendFile(at('.processing', unit.name), rows(4, 5)),
    });

    expect(duplicate.skipped.map((s) => s.unit)).toEqual(['accounts-2.csv']);
    expect(duplicate.warnings).toEqual([
      { unit: 'accounts-2.csv', warning: expect.stringContaining('changed while it was being synced') },
    ]);
    expect(await listing('archive', DAY)).toEqual(['accounts.csv']);
    expect(await rootFiles()).toEqual(['accounts-2.csv']);

    await writerDone('accounts-2.csv');
    const next = await world.pass();

    expect(next.counts.accounts).toMatchObject({ created: 2, unchanged: 3 });
    expect(createdAccounts()).toBe(5);
    expect(await listing('archive', DAY)).toEqual(['accounts-2.csv', 'accounts.csv']);
    expect(await readFile(at('archive', DAY, 'accounts-2.csv'), 'utf8')).toBe(HEADER + rows(1, 5));
  });

  it('when the file is not written to while the pass has it, then it is archived as usual, with no warning', async () => {
    await world.drop('accounts.csv', HEADER + rows(1, 3));

    const summary = await world.pass({ beforeSettle: async () => undefined });

    expect(summary.warnings).toEqual([]);
    expect(await listing('archive', DAY)).toEqual(['accounts.csv']);
    expect(await rootFiles()).toEqual([]);
  });
});

describe('files earlier passes left behind', () => {
  it('when spools and a report draft of settled files are still in .processing, then the next pass removes them; the files of a live claim and a copy under way stay', async () => {
    await mkdir(at('.processing'));
    for (const leftover of [
      'invoices.csv.failed.ndjson',
      'invoices.csv.problems.ndjson',
      'invoices.csv.errors.csv.tmp',
    ])
      await writeFile(at('.processing', leftover), 'cut short\n');
    // A claim a live process holds (this one, its lease touched now by the pass's clock).
    await writeFile(at('.processing', 'credit-notes.csv'), 'sourceId\n');
    await writeFile(
      at('.processing', 'credit-notes.csv.lease'),
      `${JSON.stringify({ pid: process.pid, host: hostname(), claimedAt: world.clock.now() })}\n`,
    );
    await utimes(at('.processing', 'credit-notes.csv.lease'), world.clock.now(), world.clock.now());
    await writeFile(at('.processing', 'credit-notes.csv.failed.ndjson'), '{}\n');
    // Copies into archive/ (another file system) cut short by a crash an hour ago, and one under way.
    await mkdir(at('archive'));
    await writeFile(at('archive', '.0123456789abcdef.copying'), 'half a file');
    const hourAgo = new Date(world.clock.now().getTime() - 3_600_000);
    await utimes(at('archive', '.0123456789abcdef.copying'), hourAgo, hourAgo);
    await writeFile(at('archive', '.fedcba9876543210.copying'), 'a copy under way');
    await utimes(at('archive', '.fedcba9876543210.copying'), world.clock.now(), world.clock.now());

    await world.pass();

    expect(await listing('.processing')).toEqual([
      'credit-notes.csv',
      'credit-notes.csv.failed.ndjson',
      'credit-notes.csv.lease',
    ]);
    expect(await listing('archive')).toEqual(['.fedcba9876543210.copying']);
  });
});
