import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { lastJsonLine, openFailuresOf, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * Data the state DB cannot store, a misspelt header, a file of nothing but bad rows: each is the
 * data's problem, never the pass's. The rows are failures with a reason, the file is archived
 * with its report, and the report, corrected, can be dropped back as it is.
 */

/** The archived files of the drop folder (relative to `archive/`), and what waits or was rejected. */
function whereFilesAre(env: SyncEnv) {
  const archive = join(env.dropDir, 'archive');
  return {
    waiting: readdirSync(env.dropDir).filter((f) => f.endsWith('.csv')),
    archived: existsSync(archive)
      ? readdirSync(archive, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.csv'))
          .sort()
      : [],
    rejected: existsSync(join(env.dropDir, 'rejected')) ? readdirSync(join(env.dropDir, 'rejected')) : [],
  };
}

describe('bad input is the data’s problem, never the pass’s', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox.close());

  it('when a field holds a NUL byte and a header is misspelt, then the row fails before any API call, the summary warns, and the corrected report syncs', async () => {
    const env = syncEnv(sandbox, 'postgres');
    try {
      dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [
        accountRow(1),
        accountRow(2, { name: 'Customer\u0000 2' }),
        accountRow(3),
      ]);
      dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER.replace('paidAmount', 'paidAmout'), [
        invoiceRow(1, 1, { paid: '10.00' }),
      ]);
      const first = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(first.code, first.stderr).toBe(2);
      expect(lastJsonLine(first.stdout).accounts).toMatchObject({ created: 2, failed: 1 });
      const output = first.stdout + first.stderr;
      expect(output).toContain('line 3, fullName: C-2: fullName: holds a character that cannot be stored');
      expect(output).toContain(
        'invoices.csv: warning: unknown column "paidAmout" (did you mean "paidAmount"?)',
      );
      // Found before any API call: the service never heard of C-2.
      const accounts = await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId },
      });
      expect(accounts.body.nodes.map((a: any) => a.source?.sourceId).sort()).toEqual(['C-1', 'C-3']);
      const files = whereFilesAre(env);
      expect(files.waiting).toEqual([]);
      expect(files.rejected).toEqual([]);
      const report = files.archived.find((f) => f.endsWith('accounts.csv.errors.csv'));
      expect(report).toBeDefined();
      expect(files.archived.some((f) => f.endsWith('invoices.csv.errors.csv'))).toBe(true);
      expect(await openFailuresOf(env)).toBe(1);

      // The report, corrected, dropped back as it is.
      const text = readFileSync(join(env.dropDir, 'archive', report!), 'utf8');
      expect(text.split('\r\n')[0]).toBe(`errors.line,errors.column,errors.reason,${ACCOUNT_HEADER}`);
      writeFileSync(join(env.dropDir, 'accounts-fixed.csv'), text.replaceAll('\u0000', ''));
      const fixed = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(lastJsonLine(fixed.stdout).accounts).toMatchObject({ created: 1, failed: 0 });
      expect(await openFailuresOf(env)).toBe(0);
      const after = await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId, filters: 'source:isNotEmpty' },
      });
      const named = after.body.nodes.find((a: any) => a.source?.sourceId === 'C-2');
      expect(named?.fullName).toBe('Customer 2');
    } finally {
      await env.cleanup();
    }
  });

  it('when the paidAmount header is misspelt, then the paid amounts the service holds are left as they are', async () => {
    const env = syncEnv(sandbox, 'postgres');
    try {
      const rows = (paid: string) =>
        [501, 502].map((i) => invoiceRow(i, 500, { paid }).replace(/^INV-/, 'PAID-'));
      dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(500)]);
      dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, rows('10.00'));
      const first = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(first.code, first.stderr).toBe(0);
      const paidOf = async () => {
        const found = await sandbox.call('GET', '/invoices', {
          query: { organizationId: sandbox.organizationId, filters: 'sourceId:isAnyOf:PAID-501,PAID-502' },
        });
        return found.body.nodes.map((d: { paidAmount: string }) => d.paidAmount);
      };
      expect(await paidOf()).toEqual(['10.00', '10.00']);

      // The same invoices again, the paid amount under a misspelt header: it is not given at all.
      dropCsv(
        env.dropDir,
        'invoices-2.csv',
        INVOICE_HEADER.replace('paidAmount', 'paidAmout'),
        rows('10.00'),
      );
      const again = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout + again.stderr).toContain('did you mean "paidAmount"?');
      // Compared again (their fingerprint now says "paid amount not given"), nothing sent.
      expect(lastJsonLine(again.stdout)).toMatchObject({
        invoices: { created: 0, failed: 0 },
        apiRequests: 0,
      });
      expect(await paidOf()).toEqual(['10.00', '10.00']);
    } finally {
      await env.cleanup();
    }
  });

  it('when 20,000 invoices all fail after the source (their account is missing), then each is in the report with its row, in line order', async () => {
    const ROWS = 20_000;
    const env = syncEnv(sandbox, 'postgres');
    try {
      dropCsv(
        env.dropDir,
        'invoices.csv',
        INVOICE_HEADER,
        // Keys of their own: the sandbox is shared with the other tests of this file.
        range(1, ROWS).map((i) => invoiceRow(i, 404).replace(/^INV-/, 'ORPHAN-')),
      );
      const first = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(first.code, first.stderr).toBe(2);
      expect(lastJsonLine(first.stdout).invoices).toMatchObject({ created: 0, failed: ROWS });
      const report = whereFilesAre(env).archived.find((f) => f.endsWith('invoices.csv.errors.csv'))!;
      const lines = readFileSync(join(env.dropDir, 'archive', report), 'utf8')
        .trimEnd()
        .split('\r\n');
      expect(lines).toHaveLength(ROWS + 1);
      // Each row under its line, with the row as it was (the fields read back from the file).
      const numbers = lines.slice(1).map((line) => Number(line.split(',')[0]));
      expect(numbers).toEqual(range(2, ROWS + 1));
      expect(lines[1]).toMatch(/^2,accountSourceId,.*C-404.*,ORPHAN-1,C-404,F-00001,2026-01-10,/);
      expect(await openFailuresOf(env)).toBe(ROWS);
    } finally {
      await env.cleanup();
    }
  }, 120_000);

  it('when a file holds 150,000 rows that all fail, then the pass finishes, the file is archived with its full report, and the next pass has nothing to do', async () => {
    const ROWS = 150_000;
    const env = syncEnv(sandbox, 'postgres');
    try {
      // Every row refused by validation: an unknown currency.
      dropCsv(
        env.dropDir,
        'accounts.csv',
        ACCOUNT_HEADER,
        range(1, ROWS).map((i) => accountRow(i).replace(',EUR,', ',EURO,')),
      );
      const first = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(first.code, first.stderr).toBe(2);
      expect(lastJsonLine(first.stdout).accounts).toMatchObject({ created: 0, failed: ROWS });
      expect(first.stdout + first.stderr).toContain(`… and ${ROWS - 1000} more`);
      const files = whereFilesAre(env);
      expect(files.waiting).toEqual([]);
      expect(files.rejected).toEqual([]);
      const report = files.archived.find((f) => f.endsWith('accounts.csv.errors.csv'))!;
      const lines = readFileSync(join(env.dropDir, 'archive', report), 'utf8')
        .trimEnd()
        .split('\r\n');
      expect(lines).toHaveLength(ROWS + 1);
      expect(await openFailuresOf(env)).toBe(ROWS);

      const again = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(again.code, again.stderr).toBe(0);
      expect(lastJsonLine(again.stdout).accounts).toEqual({
        created: 0,
        updated: 0,
        unchanged: 0,
        failed: 0,
      });
    } finally {
      await env.cleanup();
    }
  }, 120_000);

  it('when a cell of 2 MiB sits mid-file, then the rows after it are synced, the row is one failure with its line (failures, status, report), and the corrected report resolves it', async () => {
    const env = syncEnv(sandbox, 'postgres');
    const cli = (...args: string[]) => runCli(['--config', env.configFile, ...args], { env: env.env });
    try {
      // A pasted document as a name: quoted, with line breaks, 2 MiB (twice what a row may hold).
      const pasted = `"Customer 7002\n${'x'.repeat(2 << 20)}\nend"`;
      dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [
        accountRow(7001),
        accountRow(7002, { name: pasted }),
        accountRow(7003),
        accountRow(7004),
      ]);
      const first = await cli('sync', '--once', '--json');
      expect(first.code, first.stderr).toBe(2);
      expect(lastJsonLine(first.stdout).accounts).toMatchObject({ created: 3, failed: 1 });
      expect(first.stdout + first.stderr).toContain(
        'accounts.csv, line 3, fullName: C-7002: the row is over 1 MiB (2,097,228 characters',
      );
      const synced = await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId, filters: 'source:isNotEmpty' },
      });
      const ours = synced.body.nodes
        .map((a: any) => a.source?.sourceId)
        .filter((id: string) => id.startsWith('C-700'));
      expect(ours.sort()).toEqual(['C-7001', 'C-7003', 'C-7004']);

      // failures --json and status: one failure, with its file, line and column.
      const failures = (await cli('failures', '--json')).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(failures).toEqual([
        expect.objectContaining({
          sourceId: 'erp-csv',
          kind: 'account',
          sourceKey: 'C-7002',
          stage: 'validate',
          file: 'accounts.csv',
          line: 3,
          column: 'fullName',
          message: expect.stringMatching(
            /^the row is over 1 MiB \(2,097,\d{3} characters, 2,097,\d{3} of them in "fullName"\): a row may hold at most 1,048,576 characters/,
          ),
        }),
      ]);
      const [source] = JSON.parse((await cli('status', '--json')).stdout.trim()).sources;
      expect(source.openFailures).toBe(1);

      // The report: the row under its line, its long value cut to its first characters.
      const files = whereFilesAre(env);
      expect(files.waiting).toEqual([]);
      const report = files.archived.find((f) => f.endsWith('accounts.csv.errors.csv'))!;
      const text = readFileSync(join(env.dropDir, 'archive', report), 'utf8');
      expect(text.length).toBeLessThan(4096);
      const rows = text.trimEnd().split('\r\n');
      expect(rows).toHaveLength(2);
      expect(rows[1]).toMatch(
        /^3,fullName,"the row is over 1 MiB .*",C-7002,"Customer 7002\nx+…",EUR,7002 rue du Port,/,
      );

      // A second pass has nothing to do and duplicates nothing.
      const again = await cli('sync', '--once', '--json');
      expect(again.code, again.stderr).toBe(0);
      expect(lastJsonLine(again.stdout).accounts).toEqual({
        created: 0,
        updated: 0,
        unchanged: 0,
        failed: 0,
      });
      expect(await openFailuresOf(env)).toBe(1);

      // The report, its value shortened, dropped back: the row syncs, its failure resolved.
      writeFileSync(
        join(env.dropDir, 'accounts-fixed.csv'),
        text.replace(/"Customer 7002\nx+…"/, 'Customer 7002'),
      );
      const fixed = await cli('sync', '--once', '--json');
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(lastJsonLine(fixed.stdout).accounts).toMatchObject({ created: 1, failed: 0 });
      expect(await openFailuresOf(env)).toBe(0);
    } finally {
      await env.cleanup();
    }
  });
});
