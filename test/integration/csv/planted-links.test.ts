import { lstat, mkdir, readdir, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ACCOUNTS,
  DAY,
  type DropWorld,
  dropWorld,
  INVOICES_NO_DUE_DATE,
  type Outside,
  outsideFolder,
} from '../../support/csv-drop-pass.js';

/**
 * Whoever can write the drop folder can plant symbolic links where the source writes or moves
 * files. Each planted link must be left as it is, nothing outside the drop folder may change, and
 * the pass must say so itself (its summary, its run), not only in a log line.
 */

let world: DropWorld;
let outside: Outside;
let before: Awaited<ReturnType<Outside['snapshot']>>;

beforeEach(async () => {
  world = await dropWorld();
  outside = await outsideFolder();
  before = await outside.snapshot();
});
afterEach(async () => {
  await world.cleanup();
  await outside.cleanup();
});

const at = (...parts: string[]) => join(world.dir, ...parts);

describe('a link planted where the source writes a file', () => {
  it('when rejected/<name>.reason.txt links to a file outside, then the reason goes beside a renamed file, the outside file is untouched, and the pass reports both', async () => {
    await mkdir(at('rejected'));
    await symlink(outside.file, at('rejected', 'invoices.csv.reason.txt'));
    await world.drop('accounts.csv', ACCOUNTS);
    await world.drop('invoices.csv', INVOICES_NO_DUE_DATE);

    const summary = await world.pass();

    expect(await outside.snapshot()).toEqual(before);
    expect((await readdir(at('rejected'))).sort()).toEqual([
      'invoices.csv.reason.txt',
      'invoices~2.csv',
      'invoices~2.csv.reason.txt',
    ]);
    expect((await lstat(at('rejected', 'invoices.csv.reason.txt'))).isSymbolicLink()).toBe(true);
    const reason = await readFile(at('rejected', 'invoices~2.csv.reason.txt'), 'utf8');
    expect(reason.split('\n')[0]).toBe('missing required column "dueDate" in the header row');
    expect(summary.abandoned).toEqual([
      {
        unit: 'invoices.csv',
        reason: 'missing required column "dueDate" in the header row',
        stream: 'invoices',
        // Its reason file's name was taken by the planted link: both went to the next free name.
        place: 'rejected/invoices~2.csv',
      },
    ]);
    expect(summary.warnings).toEqual([
      {
        unit: 'invoices.csv',
        warning: expect.stringContaining(
          'rejected/invoices.csv.reason.txt (a symbolic link) stood where the file was to go: left untouched',
        ),
      },
    ]);
    expect(summary.counts.accounts.created).toBe(1);
    expect(world.state.runRows.map((r) => r.status)).toEqual(['partial']);
  });

  it('when rejected/<name> links to a file outside, then the file is rejected under a new name and the outside file is untouched', async () => {
    await mkdir(at('rejected'));
    await symlink(outside.file, at('rejected', 'invoices.csv'));
    await world.drop('invoices.csv', INVOICES_NO_DUE_DATE);

    const summary = await world.pass();

    expect(await outside.snapshot()).toEqual(before);
    expect((await readdir(at('rejected'))).sort()).toEqual([
      'invoices.csv',
      'invoices~2.csv',
      'invoices~2.csv.reason.txt',
    ]);
    expect(await readFile(at('rejected', 'invoices~2.csv'), 'utf8')).toBe(INVOICES_NO_DUE_DATE);
    expect(summary.abandoned.map((a) => a.unit)).toEqual(['invoices.csv']);
    expect(summary.warnings[0]?.warning).toContain('rejected/invoices.csv (a symbolic link)');
    expect(world.state.runRows.map((r) => r.status)).toEqual(['partial']);
  });

  it('when .processing/<name>.problems.ndjson links to a file outside, then the file is rejected unread, naming the link, which stays as it is', async () => {
    await mkdir(at('.processing'));
    await symlink(outside.file, at('.processing', 'accounts.csv.problems.ndjson'));
    // A refused row: its report would be spooled through the link.
    await world.drop('accounts.csv', `${ACCOUNTS}ACC-2,Nordwind,not-a-currency\n`);

    const summary = await world.pass();

    expect(await outside.snapshot()).toEqual(before);
    expect((await lstat(at('.processing', 'accounts.csv.problems.ndjson'))).isSymbolicLink()).toBe(true);
    expect(summary.abandoned).toEqual([
      {
        unit: 'accounts.csv',
        stream: 'accounts',
        place: expect.stringMatching(/^rejected\/accounts(~\d+)?\.csv$/),
        reason: expect.stringContaining(
          '.processing/accounts.csv.problems.ndjson (a symbolic link) stands where the source spools',
        ),
      },
    ]);
    expect(summary.counts.accounts).toMatchObject({ created: 0, failed: 0 });
    expect(await readdir(at('rejected'))).toEqual(['accounts.csv', 'accounts.csv.reason.txt']);
    expect(world.state.runRows.map((r) => r.status)).toEqual(['partial']);
  });
});

describe('a link planted where the source moves a file', () => {
  it('when .processing/<name> links to a file outside, then it is neither read, moved nor followed, the dropped file waits, and the pass warns', async () => {
    await mkdir(at('.processing'));
    await symlink(outside.file, at('.processing', 'accounts.csv'));
    await world.drop('accounts.csv', ACCOUNTS);

    const summary = await world.pass();

    expect(await outside.snapshot()).toEqual(before);
    expect((await lstat(at('.processing', 'accounts.csv'))).isSymbolicLink()).toBe(true);
    expect(await readFile(at('accounts.csv'), 'utf8')).toBe(ACCOUNTS);
    expect(summary.warnings).toEqual([
      {
        unit: 'accounts.csv',
        warning: expect.stringContaining('.processing/accounts.csv is not a regular file'),
      },
    ]);
    expect(summary.counts.accounts.created).toBe(0);
  });
});

describe('a working folder replaced by a link', () => {
  it.each([
    ['archive', 'accounts.csv', ACCOUNTS],
    ['rejected', 'invoices.csv', INVOICES_NO_DUE_DATE],
    ['.processing', 'accounts.csv', ACCOUNTS],
  ])(
    'when %s/ links to a folder outside, then the pass fails naming it and nothing is moved',
    async (folder, name, content) => {
      await symlink(outside.dir, at(folder));
      await world.drop(name, content);

      const pass = world.pass();

      await expect(pass).rejects.toMatchObject({
        code: 'CSV_DROP_DIR_UNSAFE',
        message: expect.stringContaining(`${at(folder)} is a symbolic link, not a folder`),
      });
      expect(await outside.snapshot()).toEqual(before);
      expect((await readdir(world.dir)).sort()).toEqual([folder, name].sort());
      expect(await readFile(at(name), 'utf8')).toBe(content);
      expect(world.state.runRows.map((r) => r.status)).toEqual(['failed']);
    },
  );

  it('when archive/<day>/ is a link to a folder outside, then the pass stops naming it and the file goes back to the drop folder', async () => {
    await mkdir(at('archive'));
    await symlink(outside.dir, at('archive', DAY));
    await world.drop('accounts.csv', ACCOUNTS);

    await expect(world.pass()).rejects.toMatchObject({ code: 'CSV_DROP_DIR_UNSAFE' });

    expect(await outside.snapshot()).toEqual(before);
    expect(await readFile(at('accounts.csv'), 'utf8')).toBe(ACCOUNTS);
    expect(await readdir(at('.processing'))).toEqual([]);
  });
});
