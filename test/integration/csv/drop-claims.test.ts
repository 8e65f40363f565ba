import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { createLogger } from '../../../src/logging/logger.js';
import { type CsvSource, createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { DropFolder } from '../../../src/sources/csv/drop-folder.js';
import { CsvSourceError } from '../../../src/sources/csv/errors.js';
import { InMemoryDropFileLedger } from '../../../src/sources/ports.js';
import type { SourceUnit } from '../../../src/sources/source.js';

const ACCOUNTS = 'sourceId,fullName,currencyCode\nACC-1,Atelier,EUR\n';
const INVOICES =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount\nI-1,ACC-1,F-1,2026-01-02,2026-02-01,1.00,0.00\n';

let dir: string;
let clock: ManualClock;
let ledger: InMemoryDropFileLedger;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-claims-'));
  clock = new ManualClock('2026-01-15T10:00:00.000Z');
  ledger = new InMemoryDropFileLedger();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const secondsAgo = (seconds: number): Date => new Date(clock.now().getTime() - seconds * 1000);

async function drop(name: string, content = ACCOUNTS, mtime = secondsAgo(3600)): Promise<void> {
  await writeFile(join(dir, name), content);
  await utimes(join(dir, name), mtime, mtime);
}

function source(options: { dryRun?: boolean; ledger?: InMemoryDropFileLedger } = {}): CsvSource {
  return createCsvSource({
    config: { id: 'erp-csv', type: 'csv', dropDir: dir, stableSeconds: 5, mapping: {}, strictColumns: false },
    clock,
    logger: createLogger({ level: 'silent' }),
    ledger: options.ledger ?? ledger,
    dryRun: options.dryRun ?? false,
  });
}

/** Runs a pass like the engine; returns the names of the units handed out. */
async function pass(
  csv: CsvSource,
  settle: (unit: SourceUnit) => Promise<void> = (u) => u.complete({ failures: [] }),
) {
  const names: string[] = [];
  for await (const unit of csv.units()) {
    names.push(unit.name);
    for await (const _batch of unit.batches()) {
      // drained
    }
    await settle(unit);
  }
  return names;
}

const root = async () =>
  (await readdir(dir)).filter((n) => !['archive', 'rejected', '.processing'].includes(n)).sort();

describe('which files a pass takes', () => {
  it('when files are hidden, temporary, partial or of another kind, then they are never taken', async () => {
    for (const name of [
      '.accounts.csv',
      'accounts.csv.tmp',
      'invoices.csv.part',
      'payments.csv',
      'accounts.txt',
    ]) {
      await drop(name);
    }
    await mkdir(join(dir, 'invoices-folder.csv'));
    await drop('accounts.csv');
    expect(await pass(source())).toEqual(['accounts.csv']);
    expect(await root()).toEqual(
      [
        '.accounts.csv',
        'accounts.csv.tmp',
        'accounts.txt',
        'invoices-folder.csv',
        'invoices.csv.part',
        'payments.csv',
      ].sort(),
    );
  });

  it('when a file was modified less than stableSeconds ago, then it is left for a later pass', async () => {
    await drop('accounts.csv', ACCOUNTS, secondsAgo(2));
    const csv = source();
    expect(await pass(csv)).toEqual([]);
    expect(csv.lastPass().waiting).toEqual(['accounts.csv']);
    expect(await root()).toEqual(['accounts.csv']);
    clock.advance(3000);
    expect(await pass(csv)).toEqual(['accounts.csv']);
    expect(await root()).toEqual([]);
  });

  it('when a recent file is still growing between passes, then it waits until it stops', async () => {
    await drop('accounts.csv', ACCOUNTS, secondsAgo(0));
    const csv = source();
    expect(await pass(csv)).toEqual([]);
    clock.advance(4000);
    await drop('accounts.csv', `${ACCOUNTS}ACC-2,Nordwind,EUR\n`, secondsAgo(0));
    clock.advance(4000);
    expect(await pass(csv)).toEqual([]);
    clock.advance(1000);
    expect(await pass(csv)).toEqual(['accounts.csv']);
  });
});

describe('claiming', () => {
  it('when two processes run a pass at once, then each file is taken by exactly one of them', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `accounts-${String(i).padStart(2, '0')}.csv`);
    for (const [i, name] of names.entries()) await drop(name, `${ACCOUNTS}ACC-${i + 10},N,EUR\n`);
    const [a, b] = await Promise.all([
      pass(source()),
      pass(source({ ledger: new InMemoryDropFileLedger() })),
    ]);
    expect([...a!, ...b!].sort()).toEqual(names);
    expect(a!.filter((name) => b!.includes(name))).toEqual([]);
    expect((await readdir(join(dir, 'archive', '2026-01-15'))).sort()).toEqual(names);
  });

  it('when two claimers rename the same file at the same time, then exactly one wins', async () => {
    await drop('accounts.csv');
    const folders = Array.from({ length: 4 }, () => new DropFolder(dir, clock));
    const stamp = (await folders[0]!.stampOf('accounts.csv'))!;
    const results = await Promise.all(folders.map((folder) => folder.claim('accounts.csv', stamp)));
    expect(results.filter((r) => r === 'claimed')).toHaveLength(1);
    expect(results.filter((r) => r !== 'claimed').every((r) => r === 'gone' || r === 'busy')).toBe(true);
    expect((await readdir(join(dir, '.processing'))).sort()).toEqual(['accounts.csv', 'accounts.csv.lease']);
  });

  it('when a file of the same name is still being processed (its lease is live), then the new one waits', async () => {
    await mkdir(join(dir, '.processing'));
    await writeFile(join(dir, '.processing', 'accounts.csv'), ACCOUNTS);
    await writeFile(join(dir, '.processing', 'accounts.csv.lease'), '{}');
    await utimes(join(dir, '.processing', 'accounts.csv.lease'), secondsAgo(60), secondsAgo(60));
    await drop('accounts.csv', `${ACCOUNTS}ACC-2,Nordwind,EUR\n`);
    const csv = source();
    expect(await pass(csv)).toEqual([]);
    expect(csv.lastPass()).toMatchObject({ skipped: ['accounts.csv'], recovered: [] });
    expect(await root()).toEqual(['accounts.csv']);
    expect(await readFile(join(dir, '.processing', 'accounts.csv'), 'utf8')).toBe(ACCOUNTS);
  });

  it('when a process died holding a file (its lease went stale), then the next pass takes the file back', async () => {
    await mkdir(join(dir, '.processing'));
    for (const name of ['accounts.csv', 'invoices.csv']) {
      await writeFile(join(dir, '.processing', name), name === 'accounts.csv' ? ACCOUNTS : INVOICES);
      await utimes(join(dir, '.processing', name), secondsAgo(3600), secondsAgo(3600));
    }
    await writeFile(join(dir, '.processing', 'accounts.csv.lease'), '{}');
    await utimes(join(dir, '.processing', 'accounts.csv.lease'), secondsAgo(600), secondsAgo(600));
    await writeFile(join(dir, '.processing', 'accounts.csv.problems.ndjson'), '{}\n');
    // invoices.csv has no lease at all: nobody holds it either.
    const csv = source();
    expect(await pass(csv)).toEqual(['accounts.csv', 'invoices.csv']);
    expect(csv.lastPass().recovered.sort()).toEqual(['accounts.csv', 'invoices.csv']);
    expect(await readdir(join(dir, '.processing'))).toEqual([]);
  });

  it('when a dead process left only its lease, then the lease is cleared and the name can be claimed', async () => {
    await mkdir(join(dir, '.processing'));
    await writeFile(join(dir, '.processing', 'accounts.csv.lease'), '{}');
    await utimes(join(dir, '.processing', 'accounts.csv.lease'), secondsAgo(600), secondsAgo(600));
    await drop('accounts.csv');
    expect(await pass(source())).toEqual(['accounts.csv']);
  });

  it('when a process was killed between creating its lease and writing it (an empty lease), then its file is taken after 10 s, not 5 min', async () => {
    await mkdir(join(dir, '.processing'));
    await writeFile(join(dir, '.processing', 'credit-notes.csv.lease'), '');
    await utimes(join(dir, '.processing', 'credit-notes.csv.lease'), secondsAgo(5), secondsAgo(5));
    await drop('credit-notes.csv', 'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\n');
    // Within its grace the empty lease may still be being written: the file waits.
    expect(await pass(source())).toEqual([]);
    clock.advance(6000);
    expect(await pass(source())).toEqual(['credit-notes.csv']);
  });

  it('when a file is claimed, then its lease says who holds it, whole, and no temporary file is left', async () => {
    await drop('accounts.csv');
    const csv = source();
    for await (const unit of csv.units()) {
      const lease = JSON.parse(await readFile(join(dir, '.processing', 'accounts.csv.lease'), 'utf8'));
      expect(lease).toMatchObject({ pid: process.pid });
      expect((await readdir(join(dir, '.processing'))).sort()).toEqual([
        'accounts.csv',
        'accounts.csv.lease',
      ]);
      for await (const _batch of unit.batches()) {
        // drained
      }
      await unit.complete({ failures: [] });
    }
  });

  it('when a dead claim and a newer drop share a name, then neither is overwritten', async () => {
    await mkdir(join(dir, '.processing'));
    await writeFile(join(dir, '.processing', 'accounts.csv'), ACCOUNTS);
    await drop('accounts.csv', `${ACCOUNTS}ACC-2,Nordwind,EUR\n`);
    expect(await pass(source())).toEqual([]);
    expect(await readFile(join(dir, '.processing', 'accounts.csv'), 'utf8')).toBe(ACCOUNTS);
    expect(await readFile(join(dir, 'accounts.csv'), 'utf8')).toContain('Nordwind');
  });

  it('when the engine fails in the middle of a unit, then that file is put back in the drop folder', async () => {
    await drop('accounts.csv');
    await drop('invoices.csv', INVOICES);
    const csv = source();
    await expect(
      (async () => {
        for await (const unit of csv.units()) {
          for await (const _batch of unit.batches()) throw new Error('API down');
        }
      })(),
    ).rejects.toThrow('API down');
    expect(await root()).toEqual(['accounts.csv', 'invoices.csv']);
    expect(await readdir(join(dir, '.processing'))).toEqual([]);
    expect(await pass(csv)).toEqual(['accounts.csv', 'invoices.csv']);
  });

  it('when a unit is released (a dry run of the engine), then the file is back in the root and taken next pass', async () => {
    await drop('accounts.csv');
    const before = await stat(join(dir, 'accounts.csv'));
    expect(await pass(source(), (unit) => unit.release())).toEqual(['accounts.csv']);
    expect(await root()).toEqual(['accounts.csv']);
    expect((await stat(join(dir, 'accounts.csv'))).mtimeMs).toBe(before.mtimeMs);
    expect(ledger.entries).toEqual([]);
    expect(await pass(source())).toEqual(['accounts.csv']);
  });

  it('when the source runs dry, then nothing is claimed, moved or recorded, and rejects are only reported', async () => {
    await drop('accounts.csv');
    await drop('invoices.csv', 'sourceId\nI-1\n');
    await drop(
      'credit-notes.csv',
      'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nC,A,N,2026-01-01,1,0\n',
    );
    ledger.entries.push({
      sourceId: 'erp-csv',
      name: 'credit-notes-old.csv',
      checksum: (await import('node:crypto'))
        .createHash('sha256')
        .update('sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nC,A,N,2026-01-01,1,0\n')
        .digest('hex'),
      size: 1,
      status: 'done',
      rows: 1,
      failedRows: 0,
      claimedAt: clock.now(),
      finishedAt: clock.now(),
    });
    const csv = source({ dryRun: true });
    const seen: string[] = [];
    for await (const unit of csv.units()) {
      for await (const batch of unit.batches()) seen.push(...batch.records.map((r) => r.record.sourceId));
      await unit.release();
    }
    expect(seen).toEqual(['ACC-1']);
    expect(csv.lastPass()).toMatchObject({
      taken: ['accounts.csv'],
      rejected: ['invoices.csv'],
      duplicates: ['credit-notes.csv'],
    });
    expect(await readdir(dir)).toEqual(
      expect.arrayContaining(['accounts.csv', 'invoices.csv', 'credit-notes.csv']),
    );
    expect(await readdir(dir)).toHaveLength(3);
    expect(ledger.entries).toHaveLength(1);
  });

  it('when the pass is aborted, then no further file is claimed', async () => {
    await drop('accounts.csv');
    await drop('invoices.csv', 'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount\n');
    const controller = new AbortController();
    const names: string[] = [];
    for await (const unit of source().units(controller.signal)) {
      names.push(unit.name);
      for await (const _batch of unit.batches()) {
        // drained
      }
      await unit.complete({ failures: [] });
      controller.abort();
    }
    expect(names).toEqual(['accounts.csv']);
    expect(await root()).toEqual(['invoices.csv']);
  });
});

describe('misuse and configuration', () => {
  it('when the drop folder does not exist, then the pass fails with CSV_DROP_DIR_MISSING', async () => {
    const csv = createCsvSource({
      config: {
        id: 'erp-csv',
        type: 'csv',
        dropDir: join(dir, 'missing'),
        stableSeconds: 5,
        mapping: {},
        strictColumns: false,
      },
      clock,
      logger: createLogger({ level: 'silent' }),
      ledger,
    });
    await expect(pass(csv)).rejects.toMatchObject({ code: 'CSV_DROP_DIR_MISSING' });
  });

  it('when complete is called before the batches are drained, then it fails and the unit can still be released', async () => {
    await drop('accounts.csv');
    for await (const unit of source().units()) {
      await expect(unit.complete({ failures: [] })).rejects.toBeInstanceOf(CsvSourceError);
      await unit.release();
    }
    expect(await root()).toEqual(['accounts.csv']);
  });
});
