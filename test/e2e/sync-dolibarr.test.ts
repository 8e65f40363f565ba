import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDolibarrDb,
  type DolibarrDb,
  dolibarrStreams,
  seedDolibarr,
} from '../integration/sql/dolibarr-fixture.js';
import { runCli } from '../support/cli.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

/**
 * The built CLI against a Dolibarr database on the machine's MariaDB: the worked example of
 * docs/sources-sql.md synced to the sandbox, then a payment recorded on one invoice synced as that
 * invoice's update alone.
 */
describe('sync --once of a Dolibarr database on MariaDB', () => {
  let sandbox: TestSandbox;
  let dolibarr: DolibarrDb;
  let env: SyncEnv;
  const sync = (...args: string[]) =>
    runCli(['--config', env.configFile, 'sync', '--once', '--source', 'dolibarr', ...args], {
      env: env.env,
    });
  const invoice = async (ref: string) =>
    (
      await sandbox.call('GET', '/invoices', {
        query: { organizationId: sandbox.organizationId, filters: `sourceId:is:${ref}` },
      })
    ).body.nodes;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dolibarr = await createDolibarrDb('e2e');
    await seedDolibarr(dolibarr, { customers: 6, invoices: 20, creditNotes: 3 });
    // A draft (fk_statut 0, Dolibarr's provisional ref): not an invoice yet, never sent.
    await dolibarr.sql(
      `insert into llx_facture (rowid, ref, type, fk_soc, datef, date_lim_reglement, total_ht, total_tva,
                                total_ttc, fk_statut, tms)
       values (900, '(PROV900)', 0, 1, '2026-01-02', '2026-02-01', 10, 2, 12, 0, '2026-01-01 00:05:00')`,
    );
    // The source as a YAML flow mapping (JSON is YAML): the queries exactly as the fixture has them.
    const source = { id: 'dolibarr', type: 'sql', urlEnv: 'DOLIBARR_URL', streams: dolibarrStreams() };
    env = syncEnv(sandbox, 'embedded', `  - ${JSON.stringify(source)}\n`);
    env.env.DOLIBARR_URL = dolibarr.url;
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
    await dolibarr?.close();
  });

  it('when the first pass runs, then every customer, validated invoice and credit note is created once', async () => {
    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = lastJsonLine(result.stdout);
    expect(summary.accounts).toEqual({ ...zero, created: 6 });
    expect(summary.invoices).toEqual({ ...zero, created: 20 });
    expect(summary.creditNotes).toEqual({ ...zero, created: 3 });
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 6, invoices: 20, creditNotes: 3 });

    // Invoice 3: total 103.50 + 20.70 tax, 10.00 paid through llx_paiement_facture, all DOUBLE(24,8).
    expect((await invoice('FA2601-00003'))[0]).toMatchObject({
      totalAmount: '124.20',
      taxAmount: '20.70',
      paidAmount: '10.00',
      issuedDate: { year: 2025, month: 1, day: 4 },
    });
    expect(await invoice('(PROV900)')).toEqual([]);
    const creditNotes = await sandbox.call('GET', '/credit-notes', {
      query: { organizationId: sandbox.organizationId, filters: 'sourceId:is:AV2601-00002' },
    });
    // Stored negative by Dolibarr (type 2), sent positive.
    expect(creditNotes.body.nodes[0]).toMatchObject({ totalAmount: '26.00', taxAmount: '4.00' });
  });

  it('when a payment is recorded on one invoice, then the next pass updates that invoice alone, nothing twice', async () => {
    await dolibarr.sql(
      `insert into llx_paiement_facture (fk_paiement, fk_facture, amount) values (1001, 5, 50);
       update llx_facture set tms = '2026-02-01 09:00:00' where rowid = 5`,
    );
    const result = await sync('--json');
    expect(result.code, result.stderr).toBe(0);
    const summary = lastJsonLine(result.stdout);
    // The 19 others were seeded within the look-back (300 s) of the cursor: read again, unchanged, no call.
    expect(summary.invoices).toEqual({ ...zero, updated: 1, unchanged: 19 });
    expect(summary.accounts).toMatchObject({ created: 0, updated: 0, failed: 0 });
    expect(summary.creditNotes).toMatchObject({ created: 0, updated: 0, failed: 0 });
    expect((await invoice('FA2601-00005'))[0]).toMatchObject({ paidAmount: '50.00' });
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 6, invoices: 20, creditNotes: 3 });

    // The same state read again: nothing to write.
    const again = await sync('--json');
    expect(again.code, again.stderr).toBe(0);
    expect(lastJsonLine(again.stdout)).toMatchObject({
      invoices: { created: 0, updated: 0, failed: 0 },
      apiRequests: 0,
    });
  });

  it('when doctor checks the source, then it connects to MariaDB and every stream query compiles', async () => {
    const result = await runCli(['--config', env.configFile, 'doctor', '--json', '--source', 'dolibarr'], {
      env: env.env,
    });
    const report = lastJsonLine(result.stdout) as {
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    expect(report.checks.find((c) => c.name === 'source dolibarr')).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(
        /^connects \(MariaDB [\d.]+\); accounts, invoices, creditNotes stream queries compile/,
      ),
    });
  });
});
