import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';
import { mountTmpfs, resizeTmpfs, tmpfsAvailable, unmountTmpfs } from '../support/tmpfs.js';

/**
 * `archive/` on a file system of its own (a network share's usual layout; here a tmpfs mounted
 * there), where `rename` and `link` fail with EXDEV. `sync --once` (the built CLI, the real Postgres
 * and the sandbox over HTTP) must copy each file whole into it, flushed, before removing it from the
 * drop folder; a copy that cannot finish (the mount too small) must leave the file whole in the drop
 * folder, nothing cut in `archive/`, and say so truly; the next pass with space archives it, every
 * row synced once.
 */

/** An invoice refused by the source (its due date): a row of the file's report. */
const refusedInvoice = (i: number) => invoiceRow(i, 1).replace('2026-02-09', 'soon');

describe.skipIf(!tmpfsAvailable())('archive/ on another file system', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let archive: string;
  const sync = () => runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
  const dropEntries = () => readdirSync(env.dropDir).sort();
  /** The one day folder of `archive/` and what it holds; `archive/` itself holds nothing else. */
  const archived = () => {
    const days = readdirSync(archive);
    expect(days).toHaveLength(1);
    return { day: join(archive, days[0]!), files: readdirSync(join(archive, days[0]!)).sort() };
  };

  beforeEach(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    env = syncEnv(sandbox, 'postgres');
    archive = join(env.dropDir, 'archive');
  });
  afterEach(async () => {
    unmountTmpfs(archive);
    await env.cleanup();
    await sandbox.close();
  });

  it('when archive/ is another mount, then each file and its report are copied there whole and leave the drop folder', async () => {
    mountTmpfs(archive, '8m');
    const accounts = dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 5).map((i) => accountRow(i)),
    );
    const invoices = dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      ...range(1, 50).map((i) => invoiceRow(i, (i % 5) + 1)),
      refusedInvoice(51),
      refusedInvoice(52),
    ]);
    const sent = { accounts: readFileSync(accounts), invoices: readFileSync(invoices) };

    const result = await sync();

    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).not.toContain('EXDEV');
    expect(lastJsonLine(result.stdout)).toMatchObject({
      accounts: { created: 5, failed: 0 },
      invoices: { created: 50, failed: 2 },
    });
    const { day, files } = archived();
    expect(files).toEqual(['accounts.csv', 'invoices.csv', 'invoices.csv.errors.csv']);
    expect(readFileSync(join(day, 'accounts.csv'))).toEqual(sent.accounts);
    expect(readFileSync(join(day, 'invoices.csv'))).toEqual(sent.invoices);
    expect(readFileSync(join(day, 'invoices.csv.errors.csv'), 'utf8').trimEnd().split('\r\n')).toHaveLength(
      3,
    );
    expect(dropEntries()).toEqual(['.processing', 'archive']);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 5, invoices: 50 });
  });

  it('when archive/ is too small for the file, then the copy fails half-way: the file stays whole in the drop folder, nothing is left in archive/, and the next pass with space archives it, every row once', async () => {
    mountTmpfs(archive, '16k');
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
    const invoices = dropCsv(
      env.dropDir,
      'invoices.csv',
      INVOICE_HEADER,
      range(1, 300).map((i) => invoiceRow(i, 1)),
    );
    const sent = readFileSync(invoices);
    expect(sent.length).toBeGreaterThan(16 * 1024);

    const cut = await sync();

    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stderr).toMatch(
      /could not run: a disk of the drop folder is full \(CSV_DROP_DIR_FULL: disk full: invoices\.csv could not be archived in .*\/archive \(ENOSPC\): free space there; the file goes back to the drop folder and the next pass reads it again\); files and records stay where they were, the next pass resumes/,
    );
    // True: the file whole where it was dropped, no part of it in archive/, nothing left claimed.
    expect(dropEntries()).toEqual(['.processing', 'archive', 'invoices.csv']);
    expect(readFileSync(invoices)).toEqual(sent);
    expect(archived().files).toEqual(['accounts.csv']);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 1, invoices: 300 });

    resizeTmpfs(archive, '1m');
    const healed = await sync();

    expect(healed.code, healed.stderr).toBe(0);
    expect(lastJsonLine(healed.stdout)).toMatchObject({
      invoices: { created: 0, unchanged: 300, failed: 0 },
    });
    const { day, files } = archived();
    expect(files).toEqual(['accounts.csv', 'invoices.csv']);
    expect(readFileSync(join(day, 'invoices.csv'))).toEqual(sent);
    expect(dropEntries()).toEqual(['.processing', 'archive']);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 1, invoices: 300 });
  });

  it('when archive/ has no room for the report, then the file is not archived without it: it stays in the drop folder, its failed rows recorded; the next pass with space archives both, the report whole', async () => {
    mountTmpfs(archive, '16k');
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
    const invoices = dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, range(1, 300).map(refusedInvoice));
    const sent = readFileSync(invoices);

    const cut = await sync();

    expect(cut.code, cut.stderr).toBe(1);
    expect(cut.stderr).toContain('CSV_DROP_DIR_FULL: disk full: invoices.csv could not be archived in');
    expect(cut.stderr).toContain('files and records stay where they were');
    expect(dropEntries()).toEqual(['.processing', 'archive', 'invoices.csv']);
    expect(readFileSync(invoices)).toEqual(sent);
    expect(archived().files).toEqual(['accounts.csv']);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    const failures = await runCli(['--config', env.configFile, 'failures', '--json'], { env: env.env });
    expect(failures.code, failures.stderr).toBe(0);
    expect(failures.stdout).toContain('INV-300');

    resizeTmpfs(archive, '1m');
    const healed = await sync();

    expect(healed.code, healed.stderr).toBe(2);
    expect(lastJsonLine(healed.stdout)).toMatchObject({ invoices: { failed: 300 } });
    const { day, files } = archived();
    expect(files).toEqual(['accounts.csv', 'invoices.csv', 'invoices.csv.errors.csv']);
    const report = readFileSync(join(day, 'invoices.csv.errors.csv'), 'utf8').trimEnd().split('\r\n');
    expect(report).toHaveLength(301);
    expect(report.at(-1)).toContain('INV-300');
    expect(dropEntries()).toEqual(['.processing', 'archive']);
  });
});
