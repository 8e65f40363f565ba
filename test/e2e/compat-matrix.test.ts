import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxOverrides } from '../../src/sandbox/options.js';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  CREDIT_NOTE_HEADER,
  creditNoteRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
} from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * Every server the spec allows where it says "not shown", one sandbox switch at a time: `doctor`
 * passes and a refresh-token configuration syncs a drop folder (accounts, paid and unpaid invoices,
 * a credit note), then a second drop changes paid amounts and a due date through the document
 * write. The client's `api.compat` follows the server where it must (the document write, paid
 * creations); elsewhere it has no setting and must tolerate each variant as it is.
 */

interface Variant {
  name: string;
  server: SandboxOverrides['compat'];
  /** `api.compat` of the client's configuration file (YAML under `api:`), when it needs one. */
  client?: string;
}

const VARIANTS: Variant[] = [
  { name: "the contract's defaults", server: {} },
  { name: 'protected resource named {base_url}', server: { protectedResource: 'base' } },
  ...(['403', '409', '422'] as const).map((status) => ({
    name: `managed-action-forbidden answered ${status}`,
    server: { managedActionStatus: Number(status) as 403 | 409 | 422 },
  })),
  ...(['409', '422'] as const).map((status) => ({
    name: `duplicates answered ${status}`,
    server: { duplicateSourceStatus: Number(status) as 409 | 422 },
  })),
  ...(['connectionId', 'connectorType'] as const).map((field) => ({
    name: `the /accounts source filter comparing ${field}`,
    server: { accountSourceFilter: field },
  })),
  {
    name: 'document write PUT /{kind}/{id}/payment {amountPaid, dueOn}',
    server: {
      documentPatch: {
        method: 'PUT',
        path: '/{kind}/{id}/payment',
        paidAmountField: 'amountPaid',
        dueDateField: 'dueOn',
      },
    },
    client: [
      '  compat:',
      '    documentPatch:',
      '      method: PUT',
      '      path: /{kind}/{id}/payment',
      '      paidAmountField: amountPaid',
      '      dueDateField: dueOn',
    ].join('\n'),
  },
  {
    name: 'document write POST /documents/{id}',
    server: { documentPatch: { method: 'POST', path: '/documents/{id}' } },
    client: ['  compat:', '    documentPatch:', '      method: POST', '      path: /documents/{id}'].join(
      '\n',
    ),
  },
  {
    name: 'documents created already paid (field amountPaid)',
    server: { createPaid: true, createPaidField: 'amountPaid' },
    client: ['  compat:', '    createPaid: true', '    createPaidField: amountPaid'].join('\n'),
  },
];

describe.each(VARIANTS)('a server with $name', ({ server, client }) => {
  let sandbox: TestSandbox;
  let env: SyncEnv;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ compat: server });
    env = syncEnv(sandbox, 'postgres', client ? `api:\n${client}\n` : '');
    const { refreshToken } = await sandbox.admin('POST', '/tokens', { withRefreshToken: true });
    env.env.RECEIVABLES_ACCESS_TOKEN = '';
    env.env.RECEIVABLES_REFRESH_TOKEN = refreshToken;
    env.env.RECEIVABLES_TOKEN_KEY = 'a passphrase for the stored tokens of this test';
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1), accountRow(2)]);
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  const paidOf = () =>
    Object.fromEntries(
      [...sandbox.deps.store.documents.values()].map((d) => [
        d.sourceId,
        { paid: d.paidAmount, due: d.dueDate && `${d.dueDate.year}-${d.dueDate.month}-${d.dueDate.day}` },
      ]),
    );

  it('when doctor runs, then nothing fails and it exits 0', async () => {
    const result = await runCli(['--config', env.configFile, 'doctor', '--json'], { env: env.env });
    const report = lastJsonLine(result.stdout) as { checks: Array<{ name: string; status: string }> };
    expect(
      report.checks.filter((c) => c.status === 'fail'),
      result.stderr,
    ).toEqual([]);
    expect(report.checks.find((c) => c.name === 'document write')?.status).toBe('ok');
    expect(result.code).toBe(0);
  });

  it('when a drop is synced with a refresh token, then every row lands with its paid amount, and a change of paid amount or due date follows', async () => {
    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1, { paid: '40.00' }),
      invoiceRow(2, 2),
      invoiceRow(3, 1, { paid: '120.00' }),
    ]);
    dropCsv(env.dropDir, 'credit-notes.csv', CREDIT_NOTE_HEADER, [creditNoteRow(1, 2)]);
    const first = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
    expect(first.code, first.stderr).toBe(0);
    const summary = lastJsonLine(first.stdout);
    expect(summary.accounts).toMatchObject({ created: 2, failed: 0 });
    expect(summary.invoices).toMatchObject({ created: 3, failed: 0 });
    expect(summary.creditNotes).toMatchObject({ created: 1, failed: 0 });
    expect(paidOf()).toEqual({
      'INV-1': { paid: '40.00', due: '2026-2-9' },
      'INV-2': { paid: '0.00', due: '2026-2-9' },
      'INV-3': { paid: '120.00', due: '2026-2-9' },
      'CN-1': { paid: '0.00', due: null },
    });
    // Paid invoices: created, then written (the contract), or created paid in one request.
    const writes = sandbox.deps.store.auditEntries.filter((e) => e.action === 'UpdateInvoice').length;
    expect(writes).toBe(server?.createPaid ? 0 : 2);

    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1, { paid: '120.00' }),
      invoiceRow(2, 2).replace('2026-02-09', '2026-03-31'),
      invoiceRow(3, 1, { paid: '120.00' }),
    ]);
    const second = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], {
      env: env.env,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(lastJsonLine(second.stdout).invoices).toMatchObject({ updated: 2, unchanged: 1, failed: 0 });
    expect(paidOf()).toMatchObject({
      'INV-1': { paid: '120.00', due: '2026-2-9' },
      'INV-2': { paid: '0.00', due: '2026-3-31' },
    });
    expect(sandbox.deps.store.documents.size).toBe(4);
  });
});

describe("a client whose document write is not the server's route", () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const serverRoute = {
    method: 'PUT',
    path: '/{kind}/{id}/payment',
    paidAmountField: 'amountPaid',
    dueDateField: 'dueOn',
  } as const;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ compat: { documentPatch: serverRoute } });
    env = syncEnv(sandbox, 'postgres');
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1, { paid: '40.00' }),
      invoiceRow(2, 1),
    ]);
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when doctor runs, then the document write check fails, names the route tried and the setting, and exit 1', async () => {
    const result = await runCli(['--config', env.configFile, 'doctor', '--json'], { env: env.env });
    expect(result.code).toBe(1);
    const report = lastJsonLine(result.stdout) as {
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    expect(report.checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual(['document write']);
    expect(report.checks.find((c) => c.name === 'document write')?.detail).toMatch(
      /PATCH \/invoices\/[0-9a-f-]+.*no such route.*api\.compat\.documentPatch/,
    );
  });

  it('when a pass meets the missing route, then it stops with the setting to fix (exit 1), and once it is set the next pass completes with nothing twice', async () => {
    const failed = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /no document write PATCH \/\{kind\}\/\{id\}.*set api\.compat\.documentPatch/,
    );
    // The invoices exist; the paid amount is still to be written.
    expect(sandbox.deps.store.documents.size).toBe(2);

    const fixed = `${env.configFile}.fixed.yaml`;
    writeFileSync(
      fixed,
      `${readFileSync(env.configFile, 'utf8')}api:\n  compat:\n    documentPatch:\n      method: PUT\n      path: /{kind}/{id}/payment\n      paidAmountField: amountPaid\n      dueDateField: dueOn\n`,
    );
    const healed = await runCli(['--config', fixed, 'sync', '--once', '--json'], { env: env.env });
    expect(healed.code, healed.stderr).toBe(0);
    expect(lastJsonLine(healed.stdout).invoices.failed).toBe(0);
    const docs = [...sandbox.deps.store.documents.values()];
    expect(docs.map((d) => [d.sourceId, d.paidAmount]).sort()).toEqual([
      ['INV-1', '40.00'],
      ['INV-2', '0.00'],
    ]);
  });
});
