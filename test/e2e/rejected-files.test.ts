import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AlertReceiver, startAlertReceiver } from '../integration/worker/alerts-receiver.js';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, INVOICE_HEADER, invoiceRow } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, openFailuresOf, runsOf, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * Nothing silent: a file rejected as a whole (here a `;` file in a `,` source: its header reads as
 * one cell) is named by every command a user looks at after the pass — `status` (its last run is
 * `partial`, the file and why), `failures` (a file-level failure; `failures retry` says it takes
 * the file fixed and dropped again) — and reaches the alert targets; once the corrected file is
 * dropped and synced, its failure is resolved. The built CLI (`npm run build` first), the real
 * Postgres, the sandbox and a local webhook receiver.
 */

const SEMICOLONS = (line: string) => line.replaceAll(',', ';');

describe('a file rejected as a whole, everywhere a user looks', () => {
  let sandbox: TestSandbox;
  let receiver: AlertReceiver;
  let env: SyncEnv;
  const cli = (...args: string[]) => runCli(['--config', env.configFile, ...args], { env: env.env });

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    receiver = await startAlertReceiver();
    env = syncEnv(
      sandbox,
      'postgres',
      'alerts:\n  targets:\n    - { id: ops, type: webhook, urlEnv: TEST_ALERT_URL }\n',
    );
    env.env.TEST_ALERT_URL = receiver.url('/ops');
  });
  afterAll(async () => {
    await env?.cleanup();
    await receiver?.close();
    await sandbox?.close();
  });

  it('when a ";" invoices file is dropped in a "," source, then status, failures, retry and an alert name it; the corrected file resolves it', async () => {
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
    dropCsv(env.dropDir, 'invoices.csv', SEMICOLONS(INVOICE_HEADER), [SEMICOLONS(invoiceRow(1, 1))]);

    const pass = await cli('sync', '--once', '--json');
    expect(pass.code, pass.stderr).toBe(2);
    const summary = lastJsonLine(pass.stdout);
    expect(summary.accounts).toMatchObject({ created: 1, failed: 0 });
    expect(summary.rejectedFiles).toEqual([
      { sourceId: 'erp-csv', file: 'invoices.csv', reason: expect.stringContaining('read as one cell') },
    ]);
    const reason: string = summary.rejectedFiles[0].reason;
    expect(reason).toContain('format.delimiter: ";"');
    // The run is partial, not succeeded: a file of it was not read.
    expect((await runsOf(env)).map((r) => r.status)).toEqual(['partial']);

    // status --json: the last run, its rejected files with why.
    const statusJson = await cli('status', '--json');
    expect(statusJson.code, statusJson.stderr).toBe(0);
    const [source] = JSON.parse(statusJson.stdout.trim()).sources;
    expect(source.lastRun).toMatchObject({
      status: 'partial',
      rejectedFiles: [{ file: 'invoices.csv', reason }],
    });
    expect(source.openFailures).toBe(1);
    const status = await cli('status');
    expect(status.stdout).toMatch(/last run: #\d+ partial \(once\)/);
    expect(status.stdout).toContain('files the last run could not read');
    expect(status.stdout).toContain(`    invoices.csv: ${reason}`);

    // failures: a file-level failure, where it waits, why.
    const failuresJson = await cli('failures', '--json');
    const rows = failuresJson.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toEqual([
      expect.objectContaining({
        sourceId: 'erp-csv',
        kind: 'invoice',
        sourceKey: 'invoices.csv',
        stage: 'file',
        file: 'rejected/invoices.csv',
        message: reason,
        retryable: false,
        payload: null,
      }),
    ]);
    const failures = await cli('failures');
    expect(failures.stdout).toContain(
      `erp-csv invoice invoices.csv [file; the file could not be read: fix it or the configuration, drop it again] rejected/invoices.csv: ${reason}\n`,
    );

    // failures retry: nothing to send again; it says what fixes the file.
    const retry = await cli('failures', 'retry');
    expect(retry.code, retry.stderr).toBe(2);
    expect(retry.stdout).toContain('1 file(s) could not be read at all: a retry cannot read them again');
    expect(retry.stdout).toContain(
      `erp-csv: invoices.csv (in rejected/invoices.csv, its reason in rejected/invoices.csv.reason.txt): ${reason}\n`,
    );
    expect(await openFailuresOf(env)).toBe(1);

    // The alert: run.new-failures naming the file, below the threshold (10) all the same.
    const alerts = receiver.delivered('/ops');
    expect(alerts).toEqual([
      expect.objectContaining({
        type: 'run.new-failures',
        sourceId: 'erp-csv',
        summary: expect.stringContaining(`could not read invoices.csv: ${reason}`),
        details: expect.objectContaining({ rejectedFiles: 1, files: 'invoices.csv', newFailures: 1 }),
      }),
    ]);

    // The corrected file, dropped again under its name: synced, its failure resolved.
    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [invoiceRow(1, 1)]);
    const fixed = await cli('sync', '--once', '--json');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(lastJsonLine(fixed.stdout)).toMatchObject({ invoices: { created: 1 }, rejectedFiles: [] });
    expect(await openFailuresOf(env)).toBe(0);
    expect((await cli('failures')).stdout).toBe('No open failures.\n');
    const after = JSON.parse((await cli('status', '--json')).stdout.trim()).sources[0];
    expect(after.lastRun).toMatchObject({ status: 'succeeded', rejectedFiles: [] });
    expect((await cli('status')).stdout).not.toContain('could not read');
    // No new alert: the second run opened no failure.
    expect(receiver.delivered('/ops')).toHaveLength(1);
  });

  it('when a file matches no kind, then the run names it and status shows it under the last run (the run itself succeeded)', async () => {
    dropCsv(env.dropDir, 'Kunden.csv', ACCOUNT_HEADER, [accountRow(2)]);
    const pass = await cli('sync', '--once', '--json');
    expect(pass.code, pass.stderr).toBe(0);
    expect(lastJsonLine(pass.stdout).ignoredFiles).toEqual(['Kunden.csv']);
    const text = await cli('status');
    expect(text.stdout).toContain('left in the drop folder, their names match no kind (files:): Kunden.csv');
    const json = lastJsonLine((await cli('status', '--json')).stdout);
    const source = (json.sources ?? json)[0] ?? json;
    expect(JSON.stringify(source)).toContain('"ignoredFiles":["Kunden.csv"]');
  });
});
