import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  CREDIT_NOTE_HEADER,
  creditNoteRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, openFailuresOf, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * `reconcile` of the built CLI against the sandbox, real Postgres: after a sync, what people do on
 * the service by hand (delete, edit, link to a connector, add an account with the same connection)
 * is found in the right category (exit 2), repaired where the API allows it, and a second
 * reconciliation finds no drift (exit 0) but the read-only account, named.
 */
describe('reconcile against the sandbox, Postgres state DB', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const cli = (...args: string[]) => runCli(['--config', env.configFile, ...args], { env: env.env });
  const org = () => ({ organizationId: sandbox.organizationId });

  /** API id of each of our accounts (by source id) and each document (by sourceId). */
  async function ids(): Promise<{
    accounts: Map<string, any>;
    invoices: Map<string, any>;
    creditNotes: Map<string, any>;
  }> {
    const list = async (path: string, filters: string) =>
      (await sandbox.call('GET', path, { query: { ...org(), filters, first: 100 } })).body.nodes as any[];
    const accounts = new Map(
      (await list('/accounts', 'source:isNotEmpty')).map((a) => [a.source.sourceId as string, a]),
    );
    const invoices = new Map(
      (await list('/invoices', 'sourceId:isNotEmpty')).map((d) => [d.sourceId as string, d]),
    );
    const creditNotes = new Map(
      (await list('/credit-notes', 'sourceId:isNotEmpty')).map((d) => [d.sourceId as string, d]),
    );
    return { accounts, invoices, creditNotes };
  }

  const keysOf = (items: any[], category: string, kind: string) =>
    items
      .filter((i) => i.category === category && i.kind === kind)
      .map((i) => i.sourceKey)
      .sort();

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'postgres', '    reconcile:\n      deleteOrphans: true\n');
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 6).map((i) => accountRow(i)),
    );
    // Invoice i belongs to account (i % 5) + 1: INV-1 and INV-6 to C-2, INV-3 and INV-8 to C-4.
    dropCsv(
      env.dropDir,
      'invoices.csv',
      INVOICE_HEADER,
      range(1, 8).map((i) => invoiceRow(i, (i % 5) + 1)),
    );
    dropCsv(env.dropDir, 'credit-notes.csv', CREDIT_NOTE_HEADER, [creditNoteRow(1, 1), creditNoteRow(2, 2)]);
    const synced = await cli('sync', '--once');
    expect(synced.code, synced.stderr).toBe(0);
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when nothing changed on the service, then reconcile finds no drift (exit 0) within the list estimate', async () => {
    const result = await cli('reconcile', '--json');
    expect(result.code, result.stderr).toBe(0);
    const out = lastJsonLine(result.stdout);
    expect(out.drift).toBe(0);
    expect(out.sources[0].items).toEqual([]);
    // 6 accounts, 8 invoices, 2 credit notes: one page of each list and the empty page that ends it.
    expect(out.sources[0].estimate.listRequests).toBe(6);
    expect(out.sources[0].listRequests).toBe(6);
    expect(out.sources[0].requests).toBe(6);
    expect(result.stderr).toContain('about 6 list request(s)');
  });

  it('when records are deleted, edited, linked to a connector and an orphan is added, then each is in its category (exit 2); --repair fixes what it can; then no drift but the read-only account', async () => {
    const before = await ids();
    const C = (n: number) => before.accounts.get(`C-${n}`)!.id as string;
    // Deleted by hand: account C-2 (its invoices INV-1, INV-6 and credit note CN-2 go with it), invoice INV-3.
    expect((await sandbox.call('DELETE', `/accounts/${C(2)}`)).status).toBe(204);
    await sandbox.admin('DELETE', `/documents/${before.invoices.get('INV-3')!.id}`);
    // Edited through the API: a paid amount, a name.
    const patched = await sandbox.call('PATCH', `/invoices/${before.invoices.get('INV-8')!.id}`, {
      body: { paidAmount: '40.00' },
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    const renamed = await sandbox.call('PUT', `/accounts/${C(3)}`, { body: { fullName: 'Renamed by hand' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    // Linked to a connector: read-only from now on.
    await sandbox.admin('PATCH', `/accounts/${C(5)}`, {
      source: {
        connectionId: 'pl-1',
        sourceId: 'PL-5',
        connectorType: 'Pennylane',
        lastUpdate: '2026-01-01T00:00:00Z',
      },
      readOnlyReason: 'Pennylane',
    });
    // An orphan of this connection: no row of the source claims it.
    const orphan = await sandbox.call('POST', '/accounts', {
      body: {
        ...org(),
        fullName: 'Ghost',
        currencyCode: 'EUR',
        billingAddress: { street: null, city: null, postalCode: null, country: null },
        source: { connectionId: 'erp-csv', sourceId: 'GHOST-1' },
      },
    });
    expect(orphan.status, JSON.stringify(orphan.body)).toBe(201);

    const found = await cli('reconcile', '--json');
    expect(found.code, found.stderr).toBe(2);
    const report = lastJsonLine(found.stdout).sources[0];
    const items = report.items as any[];
    expect(keysOf(items, 'missing', 'account')).toEqual(['C-2']);
    expect(keysOf(items, 'missing', 'invoice')).toEqual(['INV-1', 'INV-3', 'INV-6']);
    expect(keysOf(items, 'missing', 'creditNote')).toEqual(['CN-2']);
    expect(keysOf(items, 'changed', 'account')).toEqual(['C-3']);
    expect(items.find((i) => i.sourceKey === 'C-3').fields).toEqual([
      { field: 'fullName', expected: 'Customer 3', actual: 'Renamed by hand' },
    ]);
    expect(keysOf(items, 'changed', 'invoice')).toEqual(['INV-8']);
    expect(items.find((i) => i.sourceKey === 'INV-8').fields).toEqual([
      { field: 'paidAmount', expected: '0.00', actual: '40.00' },
    ]);
    expect(keysOf(items, 'readOnly', 'account')).toEqual(['C-5']);
    expect(keysOf(items, 'orphan', 'account')).toEqual(['GHOST-1']);
    expect(items).toHaveLength(9);
    expect(report.counts.missing).toEqual({ account: 1, invoice: 3, creditNote: 1 });
    expect(found.stderr).toContain('readOnly account C-5');
    expect(found.stderr).toMatch(
      /changed invoice INV-8 .*: the service holds paidAmount 40\.00, the source says 0\.00/,
    );
    // The cost: the three lists (one page of 100 each, plus the page that ends each list), and one
    // GET for the account the list of linked accounts no longer returned (C-2: 404).
    const listBound = report.estimate.listRequests;
    process.stdout.write(
      `reconcile cost: ${report.requests} requests (${report.listRequests} list pages, estimate ${report.estimate.listRequests})\n`,
    );
    expect(report.listRequests).toBeLessThanOrEqual(listBound);
    expect(report.requests).toBe(report.listRequests + 1);

    const repaired = await cli('reconcile', '--repair', '--json');
    expect(repaired.code, repaired.stderr + repaired.stdout).toBe(0);
    const fix = lastJsonLine(repaired.stdout).sources[0];
    expect(fix.drift).toBe(0);
    // The readable report (stderr with --json) names each record it fixed and what was done on
    // the service, in words (the --json line keeps the keys).
    expect(repaired.stderr).toMatch(/fixed: missing account C-2\b.*: re-created on the service/);
    expect(repaired.stderr).toMatch(
      /fixed: changed account C-3 .*: set the service's fullName back to "Customer 3" \(it held "Renamed by hand"\), as the source says/,
    );
    expect(repaired.stderr).toMatch(
      /fixed: changed invoice INV-8 .*: set the service's paidAmount back to 0\.00 \(it held 40\.00\), as the source says/,
    );
    expect(repaired.stderr).toMatch(/fixed: orphan account GHOST-1 .*: its source unlinked on the service/);
    expect(repaired.stderr).toContain(
      '  repair: 5 re-created or adopted again on the service, 2 set back on the service to what the source says, 1 orphan account(s) unlinked from this connection, 1 held by the service, recorded as failures',
    );
    expect(repaired.stderr).not.toMatch(/recreatedOrAdopted|recordedAsFailure|unlinked: \d/);
    expect(fix.repairs).toMatchObject({
      recreatedOrAdopted: 5,
      updated: 2,
      unlinked: 1,
      recordedAsFailure: 1,
      failed: 0,
    });
    expect(fix.remaining.map((i: any) => [i.category, i.sourceKey, i.acknowledged])).toEqual([
      ['readOnly', 'C-5', true],
    ]);
    const repairCost = fix.requests - fix.listRequests - 1;
    process.stdout.write(
      `reconcile --repair cost: ${fix.requests} requests (${fix.listRequests} list pages, ${repairCost} for the repairs)\n`,
    );
    expect(fix.listRequests).toBeLessThanOrEqual(listBound);
    // The repairs: lookups by source id in batches of 50, then at most a few writes per record
    // (create; update + source lastUpdate; create + paid amount), and one unlink: 8 records repaired.
    expect(repairCost).toBeGreaterThan(0);
    expect(repairCost).toBeLessThanOrEqual(8 * 3);

    // What the service holds now.
    const after = await ids();
    expect(after.accounts.get('C-2')?.id).toBeDefined();
    expect(after.accounts.get('C-2')!.id).not.toBe(C(2));
    expect(after.accounts.get('C-3')!.fullName).toBe('Customer 3');
    expect(after.accounts.has('GHOST-1')).toBe(false);
    expect(after.invoices.get('INV-8')!.paidAmount).toBe('0.00');
    for (const key of ['INV-1', 'INV-3', 'INV-6']) expect(after.invoices.has(key), key).toBe(true);
    expect(after.invoices.get('INV-1')!.accountId).toBe(after.accounts.get('C-2')!.id);
    expect(after.creditNotes.has('CN-2')).toBe(true);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ invoices: 8, creditNotes: 2 });
    // The read-only account is an open failure with its reason (`failures` lists it).
    expect(await openFailuresOf(env)).toBe(1);
    const failures = await cli('failures');
    expect(failures.stdout).toContain('C-5 [reconcile');
    expect(failures.stdout).toContain('linked to another source: Pennylane pl-1/PL-5');

    const again = await cli('reconcile');
    expect(again.code, again.stderr + again.stdout).toBe(0);
    expect(again.stdout).toContain('readOnly account C-5');
    expect(again.stdout).toContain('[held: recorded as a failure]');
    expect(again.stdout).toContain('no drift left');

    // A pass over the same rows (unchanged: no call) does not close what the service still shows.
    dropCsv(
      env.dropDir,
      'accounts-again.csv',
      ACCOUNT_HEADER,
      range(1, 6)
        .reverse()
        .map((i) => accountRow(i)),
    );
    const pass = await cli('sync', '--once', '--json');
    expect(pass.code, pass.stderr).toBe(0);
    expect(await openFailuresOf(env)).toBe(1);
    const later = await cli('reconcile');
    expect(later.code, later.stderr + later.stdout).toBe(0);
    expect(later.stdout).toContain('[held: recorded as a failure]');
  });
});
