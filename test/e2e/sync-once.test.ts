import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  CREDIT_NOTE_HEADER,
  creditNoteRow,
  dropCsv,
  dropPdf,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { seedConnectorAccount, startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type StateKind, type SyncEnv, syncEnv } from '../support/sync-env.js';

const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

/**
 * Each test stands alone: its own sandbox and state DB, and, when it is about what comes after a
 * first sync, that first sync done by `firstDropSynced()` (so `-t` can run any one of them).
 */
describe.each(['embedded', 'postgres'] as const)('sync --once with the %s state DB', (state: StateKind) => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const sync = (...args: string[]) =>
    runCli(['--config', env.configFile, 'sync', '--once', ...args], { env: env.env });

  /** The first drop: 5 accounts, 8 invoices (INV-1 with a PDF, INV-2 half paid), 2 credit notes. */
  const dropFirstFiles = () => {
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 5).map((i) => accountRow(i, { tags: i === 1 ? 'VIP|north' : '' })),
    );
    dropPdf(env.dropDir, 'pdf/inv-1.pdf');
    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1, { file: 'pdf/inv-1.pdf' }),
      ...range(2, 8).map((i) => invoiceRow(i, (i % 5) + 1, { paid: i === 2 ? '50.00' : '' })),
    ]);
    dropCsv(env.dropDir, 'credit-notes.csv', CREDIT_NOTE_HEADER, [creditNoteRow(1, 1), creditNoteRow(2, 2)]);
  };
  const firstDropSynced = async () => {
    dropFirstFiles();
    const first = await sync('--json');
    expect(first.code, `the first sync: ${first.stderr}`).toBe(0);
  };

  beforeEach(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, state);
  });
  afterEach(async () => {
    await env.cleanup();
    await sandbox.close();
  });

  it('when a first drop is synced, then every account, invoice (with and without PDF) and credit note is created once', async () => {
    dropFirstFiles();

    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = lastJsonLine(result.stdout);
    expect(summary.accounts).toEqual({ ...zero, created: 5 });
    expect(summary.invoices).toEqual({ ...zero, created: 8 });
    expect(summary.creditNotes).toEqual({ ...zero, created: 2 });
    expect(summary.rateLimited).toBe(0);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 5, invoices: 8, creditNotes: 2 });

    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId },
    });
    const c1 = accounts.body.nodes.find((a: any) => a.source?.sourceId === 'C-1');
    expect(c1.source).toMatchObject({ connectionId: 'erp-csv', connectorType: 'Custom' });
    expect(c1.tags.map((t: any) => t.name).sort()).toEqual(['VIP', 'north']);
    const inv2 = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: 'sourceId:is:INV-2' },
    });
    expect(inv2.body.nodes[0]).toMatchObject({
      paidAmount: '50.00',
      channel: 'PublicApi',
      issuedDate: { year: 2026, month: 1, day: 10 },
    });
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });

  it('when the same file is dropped again, then it is recognised by checksum, archived without a sync, its rows counted unchanged', async () => {
    await firstDropSynced();
    dropCsv(env.dropDir, 'credit-notes-again.csv', CREDIT_NOTE_HEADER, [
      creditNoteRow(1, 1),
      creditNoteRow(2, 2),
    ]);
    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    // The contract: a re-dropped file with the same content counts its rows as unchanged.
    expect(lastJsonLine(result.stdout)).toMatchObject({
      creditNotes: { ...zero, unchanged: 2 },
      apiRequests: 0,
    });
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });

  it('when the same rows are dropped again, then nothing is written and no API call is made', async () => {
    await firstDropSynced();
    // Same rows in new files (another name and row order, so the checksum differs): compared by content hash.
    dropCsv(
      env.dropDir,
      'accounts-2.csv',
      ACCOUNT_HEADER,
      range(1, 5)
        .reverse()
        .map((i) => accountRow(i, { tags: i === 1 ? 'north|VIP' : '' })),
    );
    dropCsv(env.dropDir, 'invoices-2.csv', INVOICE_HEADER, [
      ...range(2, 8).map((i) => invoiceRow(i, (i % 5) + 1, { paid: i === 2 ? '50' : '' })),
      invoiceRow(1, 1, { file: 'pdf/inv-1.pdf' }),
    ]);
    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = lastJsonLine(result.stdout);
    expect(summary.accounts).toEqual({ ...zero, unchanged: 5 });
    expect(summary.invoices).toEqual({ ...zero, unchanged: 8 });
    expect(summary.apiRequests).toBe(0);
  });

  it('when a few rows changed, then exactly those writes are sent', async () => {
    await firstDropSynced();
    dropCsv(env.dropDir, 'accounts-3.csv', ACCOUNT_HEADER, [
      accountRow(1, { tags: 'VIP|north' }),
      accountRow(2, { city: 'Brest' }),
      accountRow(3),
    ]);
    dropCsv(env.dropDir, 'invoices-3.csv', INVOICE_HEADER, [
      invoiceRow(3, 4, { paid: '120.00' }),
      invoiceRow(4, 5),
    ]);
    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = lastJsonLine(result.stdout);
    expect(summary.accounts).toEqual({ ...zero, updated: 1, unchanged: 2 });
    expect(summary.invoices).toEqual({ ...zero, updated: 1, unchanged: 1 });
    // The account: PUT /accounts/{id} + PATCH its source's lastUpdate; the invoice: one PATCH.
    expect(summary.apiRequests).toBe(3);
    const c2 = (
      await sandbox.call('GET', '/accounts', { query: { organizationId: sandbox.organizationId } })
    ).body.nodes.find((a: any) => a.source?.sourceId === 'C-2');
    expect(c2.billingAddress.city).toBe('Brest');
    expect(c2.source.lastUpdate).toBe('2026-01-03T10:00:00.000Z');
  });

  it('when rows are bad, then exit 2, the good rows are synced and each bad row is in the report with line, column and reason', async () => {
    await firstDropSynced();
    dropCsv(env.dropDir, 'invoices-bad.csv', INVOICE_HEADER, [
      invoiceRow(20, 1),
      'INV-21,C-1,F-21,2026-02-30,2026-03-01,10.00,0.00,,,,,,,',
      'INV-22,C-1,F-22,2026-02-01,2026-03-01,"12,50",0.00,,,,,,,',
      'INV-23,C-404,F-23,2026-02-01,2026-03-01,10.00,0.00,,,,,,,',
      'INV-24,C-1,F-24,2026-02-01,2026-03-01,10.00,0.00,,,,,../../etc/passwd,,',
      ',C-1,F-25,2026-02-01,2026-03-01,10.00,0.00,,,,,,,',
      invoiceRow(26, 2),
    ]);
    const result = await sync('--json');
    expect(result.code).toBe(2);
    const summary = lastJsonLine(result.stdout);
    expect(summary.invoices).toMatchObject({ created: 2, failed: 5 });
    expect(result.stderr).toMatch(/line 3.*issuedDate/);
    expect(result.stderr).toMatch(/C-404/);
    const archive = join(env.dropDir, 'archive');
    const reports = readdirSync(archive, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('invoices-bad.csv.errors.csv'));
    expect(reports).toHaveLength(1);
    const report = readFileSync(join(archive, reports[0]!), 'utf8');
    for (const expected of ['issuedDate', 'totalAmount', 'C-404', 'file', 'sourceId'])
      expect(report).toContain(expected);
    const failures = await runCli(['--config', env.configFile, 'failures'], { env: env.env });
    expect(failures.stdout).toContain('INV-23');
    expect(failures.stdout).toMatch(/5 open failure\(s\)/);
  });

  it('when an account is managed by a connector, then its row fails with the API code and is not retried blindly', async () => {
    await seedConnectorAccount(sandbox, {
      sourceId: 'C-90',
      connectionId: 'erp-csv',
      fullName: 'Managed Ltd',
    });
    dropCsv(env.dropDir, 'accounts-managed.csv', ACCOUNT_HEADER, [accountRow(90)]);
    const result = await sync('--json');
    expect(result.code).toBe(2);
    expect(lastJsonLine(result.stdout).accounts).toMatchObject({ failed: 1 });
    const failures = await runCli(['--config', env.configFile, 'failures', '--json'], { env: env.env });
    const row = failures.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((f: any) => f.sourceKey === 'C-90');
    expect(row).toMatchObject({
      apiCode: 'app-invoicing.document.managed-action-forbidden',
      status: 400,
      retryable: false,
    });
  });

  it('when the missing account arrives and failures are retried, then the waiting invoice is synced and its failure resolved', async () => {
    dropCsv(env.dropDir, 'invoices-early.csv', INVOICE_HEADER, [
      'INV-23,C-404,F-23,2026-02-01,2026-03-01,10.00,0.00,,,,,,,',
    ]);
    const early = await sync('--json');
    expect(early.code).toBe(2);
    expect(lastJsonLine(early.stdout).invoices).toMatchObject({ failed: 1 });
    expect((await runCli(['--config', env.configFile, 'failures'], { env: env.env })).stdout).toContain(
      'INV-23',
    );

    dropCsv(env.dropDir, 'accounts-404.csv', ACCOUNT_HEADER, [accountRow(404)]);
    expect((await sync('--json')).code).toBe(0); // this pass itself has no failed row
    const retry = await runCli(['--config', env.configFile, 'failures', 'retry', '--json'], { env: env.env });
    expect(lastJsonLine(retry.stdout).invoices).toMatchObject({ created: 1 });
    const failures = await runCli(['--config', env.configFile, 'failures'], { env: env.env });
    expect(failures.stdout).not.toContain('INV-23');
    const found = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: 'sourceId:is:INV-23' },
    });
    expect(found.body.nodes).toHaveLength(1);
  });

  it('when --dry-run is given, then the plan is printed, no write is sent and the files stay in the drop folder', async () => {
    await firstDropSynced();
    dropCsv(env.dropDir, 'accounts-dry.csv', ACCOUNT_HEADER, [
      accountRow(50),
      accountRow(1, { name: 'Renamed' }),
    ]);
    const before = await sandbox.admin('GET', '/stats');
    const result = await sync('--dry-run');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/create\s+account\s+C-50/);
    expect(result.stdout).toMatch(/update\s+account\s+C-1/);
    expect(await sandbox.admin('GET', '/stats')).toEqual(before);
    expect(existsSync(join(env.dropDir, 'accounts-dry.csv'))).toBe(true);
  });
});
