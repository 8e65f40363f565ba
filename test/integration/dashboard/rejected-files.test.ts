import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failuresCsv } from '../../../src/app/failures-csv.js';
import { sourceSchema } from '../../../src/config/schema.js';
import { escapeHtml } from '../../../src/dashboard/views/html.js';
import { createSourceFactory } from '../../../src/sources/create-source.js';
import { DropFilesRepository } from '../../../src/state/drop-files.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { SyncService } from '../../../src/sync/sync-service.js';
import { FakeApi } from '../../unit/sync/fakes.js';
import { basic, openTestState, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };

const ACCOUNTS = 'sourceId,fullName,currencyCode\nC-1,Atelier,EUR\n';
const INVOICES =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount\nI-1,C-1,F-1,2026-01-02,2026-02-01,12.00,2.00\n';

/**
 * A file a run could not read, on the dashboard: the run page lists it with why (the run reads
 * `partial`), the source page's runs name it, its file-level failure is open until the corrected
 * file is read. Real passes (`SyncService`, the CSV source, the state DB in Postgres) against the
 * engine's in-memory API.
 */
describe('dashboard: files a run could not read', () => {
  let state: State;
  let dropDir: string;
  let service: SyncService;
  let app: ReturnType<typeof testApp>;
  const csv = sourceSchema.parse({ id: 'erp-csv', type: 'csv', dropDir: '/tmp/replaced', stableSeconds: 0 });
  const german = sourceSchema.parse({
    id: 'erp-de',
    type: 'csv',
    dropDir: '/tmp/unused-de',
    files: { accounts: 'Kunden*.csv', invoices: ['Rechnungen*.csv', 'RE-*.csv'] },
    format: { encoding: 'windows-1252', delimiter: ';', decimalSeparator: ',', thousandsSeparator: '.' },
    formats: { invoices: { dateFormat: 'dd.MM.yyyy' } },
    columns: { accounts: { sourceId: 'Kundennummer', fullName: 'Name', currencyCode: { value: 'EUR' } } },
    rows: { invoices: { negativeIsCreditNote: true } },
  });

  const drop = (name: string, content: string) => writeFileSync(join(dropDir, name), content);
  const get = async (url: string) => {
    const res = await app.inject({ url, headers: auth });
    expect(res.statusCode, res.body).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    state = await openTestState('dash_rejected');
    dropDir = mkdtempSync(join(tmpdir(), 'rs-dash-rejected-'));
    const config = { ...csv, dropDir };
    const repos = syncStateRepos(state.db);
    service = new SyncService({
      sources: [config],
      api: new FakeApi(),
      state: repos,
      logger: silentLogger,
      sourceFactory: createSourceFactory({
        logger: silentLogger,
        cursors: repos.cursors,
        ledger: new DropFilesRepository(state.db),
        env: {},
      }),
    });
    app = testApp(state, {
      sources: [config, german],
      failuresCsv: (source, kind) => failuresCsv(state.db, source, kind),
    });
  });
  afterAll(async () => {
    await app?.close();
    await state?.close();
    rmSync(dropDir, { recursive: true, force: true });
  });

  it('when a ";" file is rejected, then the run page lists it with why, the run is partial, and the source page names it until the corrected file is read', async () => {
    drop('accounts.csv', ACCOUNTS);
    drop('invoices.csv', INVOICES.replaceAll(',', ';'));
    const [first] = await service.syncSource('erp-csv');
    expect(first!.abandoned).toEqual([
      {
        unit: 'invoices.csv',
        reason: expect.stringContaining('the header was read as one cell'),
        stream: 'invoices',
        place: 'rejected/invoices.csv',
      },
    ]);
    const reason = escapeHtml(first!.abandoned[0]!.reason);

    const runPage = await get(`/runs/${first!.runId}`);
    expect(runPage).toMatch(
      /<span data-field="run-status"><span class="badge badge-partial" data-status="partial">/,
    );
    expect(runPage).toContain('<section id="run-rejected-files" class="card">');
    expect(runPage).toContain(
      `<tr data-rejected-file="invoices.csv"><td><code>invoices.csv</code></td><td class="message bad">${reason}</td></tr>`,
    );
    // Its file-level failure is among the run's failures: the kind of the file, keyed by its name.
    expect(runPage).toMatch(
      /<tr data-failure="\d+" data-key="invoices.csv"><td>invoice<\/td>.*<td>file<\/td>/,
    );

    const sourcePage = await get('/sources/erp-csv');
    expect(sourcePage).toContain(
      `<span class="bad" data-rejected-file="invoices.csv">could not read <code>invoices.csv</code>: ${reason}</span>`,
    );
    expect(sourcePage).toContain('data-field="open-failures">1</span>');
    expect(sourcePage).toContain('<td class="muted">rejected/invoices.csv</td>');
    // No row of it to correct: the file is no download of rows (it is fixed and dropped again whole).
    expect(sourcePage).not.toContain('data-download="invoice"');
    const download = await get('/sources/erp-csv/failures.csv?kind=invoice');
    expect(download.trim().split('\n')).toHaveLength(1);
    const status = JSON.parse(await get('/api/status'));
    expect(status.runs[0]).toMatchObject({
      status: 'partial',
      rejectedFiles: [{ file: 'invoices.csv', reason: first!.abandoned[0]!.reason }],
    });

    // The corrected file, dropped under the same name: read, synced, its failure resolved.
    drop('invoices.csv', INVOICES);
    const [second] = await service.syncSource('erp-csv');
    expect(second!.abandoned).toEqual([]);
    expect(second!.counts.invoices.created).toBe(1);
    const fixedRun = await get(`/runs/${second!.runId}`);
    expect(fixedRun).toContain('data-status="succeeded"');
    expect(fixedRun).not.toContain('run-rejected-files');
    const fixedSource = await get('/sources/erp-csv');
    expect(fixedSource).toContain('data-field="open-failures">0</span>');
    expect(fixedSource).toMatch(
      /<section id="failure-history">[\s\S]*data-key="invoices.csv"[\s\S]*data-status="resolved"/,
    );
  });

  it('when a CSV source sets files, format and columns, then its page shows each kind’s patterns, effective format and columns', async () => {
    const page = await get('/sources/erp-de');
    const config = page.slice(
      page.indexOf('<section id="config"'),
      page.indexOf('</section>', page.indexOf('<section id="config"')),
    );
    expect(config).toContain('<dt>Files</dt>');
    expect(config).toContain('<code>accounts</code>: <code>Kunden*.csv</code>');
    expect(config).toContain('<code>invoices</code>: <code>Rechnungen*.csv</code> or <code>RE-*.csv</code>');
    expect(config).toMatch(
      /<code>creditNotes<\/code>: <code>credit-notes\*\.csv<\/code> <span class="muted small">\(default\)<\/span>/,
    );
    // Per kind, as the formats differ: the invoices' own date pattern over the source's format.
    expect(config).toContain(
      '<code>accounts</code>: windows-1252, delimiter &quot;;&quot;, decimal &quot;,&quot;, thousands &quot;.&quot;, dates yyyy-MM-dd, header on line 1',
    );
    expect(config).toContain(
      '<code>invoices</code>: windows-1252, delimiter &quot;;&quot;, decimal &quot;,&quot;, thousands &quot;.&quot;, dates dd.MM.yyyy, header on line 1',
    );
    expect(config).toContain('<dt>Columns</dt>');
    expect(config).toContain(
      'sourceId &lt;- Kundennummer\nfullName &lt;- Name\ncurrencyCode &lt;- = &quot;EUR&quot;',
    );
    expect(config).toContain('<dt>Rows</dt><dd><code>invoices</code>: negativeIsCreditNote</dd>');
  });
});
