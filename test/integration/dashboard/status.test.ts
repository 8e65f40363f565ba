import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DropFilesRepository } from '../../../src/state/drop-files.js';
import { FailuresRepository } from '../../../src/state/failures.js';
import { RecordMapRepository } from '../../../src/state/record-map.js';
import { RunsRepository } from '../../../src/state/runs.js';
import { basic, openTestState, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };
const counts = (created: number, updated: number, unchanged: number, failed: number) => ({
  created,
  updated,
  unchanged,
  failed,
});
const zero = counts(0, 0, 0, 0);

describe('dashboard sync page', () => {
  let state: State;
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    state = await openTestState('dash_status');
    const runs = new RunsRepository(state.db);
    const first = await runs.start('erp-csv', 'once', false);
    await runs.finish(first, 'succeeded', {
      accounts: counts(3, 0, 0, 0),
      invoices: counts(5, 0, 0, 0),
      creditNotes: zero,
    });
    const second = await runs.start('erp-csv', 'schedule', false);
    await runs.finish(second, 'partial', {
      accounts: counts(0, 1, 2, 0),
      invoices: counts(1, 0, 4, 2),
      creditNotes: zero,
    });
    await runs.start('billing-db', 'manual', false); // still running
    const recordMap = new RecordMapRepository(state.db);
    for (const key of ['C-1', 'C-2', 'C-3']) {
      await recordMap.save(
        'erp-csv',
        'account',
        { sourceKey: key, apiId: `a-${key}`, contentHash: 'h', syncedState: {} },
        second,
      );
    }
    await recordMap.save(
      'erp-csv',
      'invoice',
      { sourceKey: 'INV-1', apiId: 'i-1', contentHash: 'h', syncedState: {} },
      second,
    );
    const failures = new FailuresRepository(state.db);
    await failures.record({
      sourceId: 'erp-csv',
      kind: 'invoice',
      sourceKey: 'INV-9',
      stage: 'create',
      status: 400,
      apiCode: 'app-invoicing.document.managed-action-forbidden',
      message: 'Refused <script>alert("x")</script>',
      retryable: false,
      payload: {
        kind: 'invoice',
        sourceId: 'INV-9',
        number: 'F-9',
        note: '</pre><img src=x onerror=alert(1)>',
      },
      runId: second,
    });
    await failures.record({
      sourceId: 'erp-csv',
      kind: 'invoice',
      sourceKey: 'INV-10',
      stage: 'validate',
      message: 'not a date: 2026-02-30',
      file: 'invoices-bad.csv',
      line: 3,
      column: 'issuedDate',
      retryable: false,
      runId: second,
    });
    await new DropFilesRepository(state.db).record({
      sourceId: 'erp-csv',
      name: 'invoices-bad.csv',
      checksum: 'abc',
      size: 120,
      status: 'failed',
      rows: 7,
      failedRows: 2,
      claimedAt: new Date('2026-01-15T09:59:00Z'),
      finishedAt: new Date('2026-01-15T09:59:30Z'),
    });
    await state.db
      .insertInto('cursors')
      .values({
        source_id: 'billing-db',
        stream: 'invoices',
        cursor: JSON.stringify({ kind: 'keyset', values: ['2026-01-15', '42'] }),
      })
      .execute();
    app = testApp(state);
  });
  afterAll(async () => {
    await state.close();
  });

  it('when the status is asked as JSON, then each source has its type, schedule, paused flag, last run, counts and cursor', async () => {
    const res = await app.inject({ url: '/api/status', headers: auth });
    expect(res.statusCode).toBe(200);
    const status = res.json();
    const [erp, billing] = status.sources;
    expect(erp).toMatchObject({
      id: 'erp-csv',
      type: 'csv',
      schedule: '*/5 * * * *',
      paused: false,
      running: null,
      lastRun: {
        status: 'partial',
        trigger: 'schedule',
        totals: { created: 1, updated: 1, unchanged: 6, failed: 2 },
      },
      records: { account: 3, invoice: 1, creditNote: 0 },
      openFailures: 2,
      cursors: [],
      recentFiles: [{ name: 'invoices-bad.csv', status: 'failed', rows: 7, failedRows: 2 }],
    });
    expect(erp.lastRun.counts.invoices).toEqual(counts(1, 0, 4, 2));
    expect(billing).toMatchObject({
      id: 'billing-db',
      type: 'sql',
      running: { status: 'running', trigger: 'manual' },
      cursors: [{ stream: 'invoices', cursor: { kind: 'keyset', values: ['2026-01-15', '42'] } }],
    });
    expect(status.runs.map((r: any) => r.status)).toEqual(['running', 'partial', 'succeeded']);
    expect(status.failuresTotal).toBe(2);
    expect(status.failures.find((f: any) => f.sourceKey === 'INV-9')).toMatchObject({
      stage: 'create',
      status: 400,
      apiCode: 'app-invoicing.document.managed-action-forbidden',
      payload: { number: 'F-9' },
    });
    expect(status.csrfToken).toEqual(expect.any(String));
  });

  it('when the page is rendered, then sources, runs and failures (with reasons and payloads) are shown, every value escaped', async () => {
    const res = await app.inject({ url: '/', headers: { ...auth, accept: 'text/html' } });
    expect(res.statusCode).toBe(200);
    const page = res.body;
    expect(page).toContain('data-source="erp-csv"');
    expect(page).toContain('data-source="billing-db"');
    expect(page).toMatch(/data-field="last-run-created">1</);
    expect(page).toMatch(/data-field="records-account">3</);
    expect(page).toContain('app-invoicing.document.managed-action-forbidden');
    expect(page).toContain('invoices-bad.csv, line 3, column issuedDate');
    expect(page).toContain('<details id="payload-');
    expect(page).toContain('&quot;number&quot;: &quot;F-9&quot;');
    expect(page).not.toContain('<script>alert');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('Refused &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page).toContain('Re-sync one record');
    for (const action of ['resync', 'full-resync', 'retry-failures', 'pause']) {
      expect(page).toContain(`action="/actions/sources/erp-csv/${action}"`);
    }
  });

  it('when the page refreshes, then /partials/status returns the same sections only', async () => {
    const res = await app.inject({ url: '/partials/status', headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    for (const id of ['sources', 'runs', 'failures'])
      expect(res.body).toContain(`<section id="${id}" data-refresh`);
    expect(res.body).not.toContain('<html');
  });

  it('when the assets are fetched, then they are served without credentials (they hold no data)', async () => {
    const css = await app.inject({ url: '/assets/dashboard.css' });
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toContain('text/css');
    const js = await app.inject({ url: '/assets/dashboard.js' });
    expect(js.body).toContain('/partials/status');
  });
});
