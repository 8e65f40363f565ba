import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { printable } from '../../src/logging/printable-text.js';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, INVOICE_HEADER, invoiceRow } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * `sync --once` over a drop folder someone else can write: links planted where the source writes,
 * names that would forge lines or drive the terminal, a name too long to add a suffix to. The CLI
 * must leave everything outside the drop folder as it was and say what it refused, in its exit
 * code and its summary.
 */

/** No line of `text` holds a raw control character (nothing left for `printable` to escape). */
const printableLines = (text: string): boolean => text.split('\n').every((line) => printable(line) === line);

describe('sync --once over a drop folder others can write', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let outside: string;
  const sync = (...args: string[]) =>
    runCli(['--config', env.configFile, 'sync', '--once', ...args], {
      env: { ...env.env, LOG_FORMAT: 'pretty' },
    });
  const outsideNow = () => ({
    listing: readdirSync(outside).sort(),
    content: readFileSync(join(outside, 'precious.txt'), 'utf8'),
    mtimeMs: statSync(join(outside, 'precious.txt')).mtimeMs,
  });

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox.close());
  beforeEach(() => {
    env = syncEnv(sandbox, 'postgres');
    outside = mkdtempSync(join(tmpdir(), 'rs-outside-'));
    writeFileSync(join(outside, 'precious.txt'), 'precious content\n');
  });
  afterEach(async () => {
    await env.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  it('when a reason file name is a planted link and a dropped name holds a line break and ESC sequences, then the link is not written through, the exit is 2, and the summary and log show the name escaped', async () => {
    const name = 'invoices\n\u001b[2J\u001b[31mforged.csv';
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(9001)]);
    // No dueDate column: the file is rejected, and its reason file is where the link waits.
    dropCsv(env.dropDir, name, 'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount', [
      'INV-9001,C-9001,F-1,2026-01-10,1.00,0.00',
    ]);
    mkdirSync(join(env.dropDir, 'rejected'));
    symlinkSync(join(outside, 'precious.txt'), join(env.dropDir, 'rejected', `${name}.reason.txt`));
    const before = outsideNow();

    const result = await sync();

    expect(result.code, result.stderr).toBe(2);
    expect(outsideNow()).toEqual(before);
    const escaped = 'invoices\\n\\x1b[2J\\x1b[31mforged.csv';
    expect(result.stdout).toContain(
      `erp-csv: ${escaped} could not be read: missing required column "dueDate" in the header row`,
    );
    expect(result.stdout).toContain(
      `rejected/${escaped}.reason.txt (a symbolic link) stood where the file was to go`,
    );
    expect(result.stdout).toMatch(/accounts +created 1,/);
    expect(printableLines(result.stdout)).toBe(true);
    expect(result.stderr).toContain(escaped);
    expect(printableLines(result.stderr)).toBe(true);
    expect(lstatSync(join(env.dropDir, 'rejected', `${name}.reason.txt`)).isSymbolicLink()).toBe(true);
    const reason = readFileSync(
      join(env.dropDir, 'rejected', `invoices\n\u001b[2J\u001b[31mforged~2.csv.reason.txt`),
      'utf8',
    );
    expect(reason.split('\n').filter((line) => line.startsWith('file: '))).toEqual([`file: ${escaped}`]);
  });

  it('when archive/ is a link to a folder outside, then nothing is moved, the outside folder is untouched and the exit is 1 naming the folder', async () => {
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(9101)]);
    symlinkSync(outside, join(env.dropDir, 'archive'));
    const before = outsideNow();

    const result = await sync();

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${join(env.dropDir, 'archive')} is a symbolic link, not a folder`);
    expect(result.stderr).toContain('CSV_DROP_DIR_UNSAFE');
    expect(outsideNow()).toEqual(before);
    expect(readdirSync(env.dropDir).sort()).toEqual(['accounts.csv', 'archive']);

    // doctor says so before any pass, and its probe leaves nothing behind.
    const doctor = await runCli(['--config', env.configFile, 'doctor', '--json', '--source', 'erp-csv'], {
      env: env.env,
    });
    const check = JSON.parse(doctor.stdout.trim().split('\n').at(-1)!).checks.find(
      (c: { name: string }) => c.name === 'source erp-csv',
    );
    expect(check).toMatchObject({ status: 'fail' });
    expect(check.detail).toContain(`${join(env.dropDir, 'archive')} is a symbolic link, not a folder`);
    expect(readdirSync(env.dropDir).sort()).toEqual(['accounts.csv', 'archive']);
    expect(outsideNow()).toEqual(before);
  });

  it('when a 253-byte name is dropped next to a normal file, then both are synced, and the next pass is not held up', async () => {
    const name = `invoices-${'x'.repeat(253 - 'invoices-.csv'.length)}.csv`;
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(9201)]);
    dropCsv(env.dropDir, name, INVOICE_HEADER, [invoiceRow(9201, 9201)]);

    const first = await sync('--json');

    expect(first.code, first.stderr).toBe(0);
    expect(lastJsonLine(first.stdout)).toMatchObject({ accounts: { created: 1 }, invoices: { created: 1 } });
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);

    dropCsv(env.dropDir, name, INVOICE_HEADER, [invoiceRow(9201, 9201), invoiceRow(9202, 9201)]);
    const second = await sync('--json');
    expect(second.code, second.stderr).toBe(0);
    expect(lastJsonLine(second.stdout)).toMatchObject({ invoices: { created: 1, unchanged: 1 } });
  });
});
