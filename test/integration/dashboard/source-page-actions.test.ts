import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sourceSchema } from '../../../src/config/schema.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { RecordMapRepository } from '../../../src/state/record-map.js';
import { RunRecordsRepository } from '../../../src/state/run-records.js';
import { RunsRepository } from '../../../src/state/runs.js';
import {
  basic,
  csrfTokenOf,
  formPost,
  openTestState,
  RecordingQueues,
  SOURCES,
  testApp,
  truncateState,
} from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };
const html = { ...auth, accept: 'text/html' };
const NOW = new Date('2026-01-15T10:00:00Z');

/**
 * A source's page as the people who own the files use it: its actions there (the overview's, same
 * routes), Cancel of a running pass, the files waiting in its drop folder, the runs that found only
 * files still being written; a run's page (log, counts of a run that never wrote them); the record
 * search by number and customer name.
 */
describe("a source's page: actions, cancel, waiting files, runs and record search", () => {
  let state: State;
  let queues: RecordingQueues;
  let dropDir: string;
  let app: ReturnType<typeof testApp>;
  let token: string;

  beforeAll(async () => {
    state = await openTestState('dash_source_actions');
    dropDir = mkdtempSync(join(tmpdir(), 'rs-dash-waiting-'));
  });
  afterAll(async () => {
    await state.close();
    rmSync(dropDir, { recursive: true, force: true });
  });
  beforeEach(async () => {
    await truncateState(state);
    queues = new RecordingQueues();
    const sources = [
      sourceSchema.parse({ id: 'erp-csv', type: 'csv', dropDir, stableSeconds: 60 }),
      ...SOURCES.slice(1),
    ];
    app = testApp(state, { queues, sources, clock: new ManualClock(NOW) });
    token = await csrfTokenOf(app, auth);
  });

  const act = (path: string, form: Record<string, string> = {}) =>
    formPost(app, path, { _csrf: token, ...form }, auth);
  const sourcePage = async () => (await app.inject({ url: '/sources/erp-csv', headers: html })).body;

  it('when a user presses Re-sync, Full re-sync, Retry failures, Pause and Resume on the source page, then the same actions as the overview run and the answer comes back to the source page', async () => {
    const page = await sourcePage();
    const actions = page.slice(
      page.indexOf('id="source-actions"'),
      page.indexOf('</section>', page.indexOf('id="source-actions"')),
    );
    for (const name of ['resync', 'full-resync', 'retry-failures', 'pause'])
      expect(actions).toContain(`action="/actions/sources/erp-csv/${name}"`);
    expect(actions).toContain('name="back" value="source"');
    expect(actions).not.toContain('/cancel"');

    const resync = await act('/actions/sources/erp-csv/resync', { back: 'source' });
    expect(resync.statusCode).toBe(303);
    expect(String(resync.headers.location)).toMatch(
      /^\/sources\/erp-csv\?notice=resync-queued&source=erp-csv&job=/,
    );
    await act('/actions/sources/erp-csv/full-resync', { back: 'source' });
    await act('/actions/sources/erp-csv/retry-failures', { back: 'source' });
    expect(queues.calls).toEqual([
      { type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual', full: false },
      { type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual', full: true },
      { type: 'failure-retry', sourceId: 'erp-csv' },
    ]);
    const pause = await act('/actions/sources/erp-csv/pause', { back: 'source' });
    expect(String(pause.headers.location)).toBe('/sources/erp-csv?notice=paused&source=erp-csv');
    // Refused while paused: the error comes back to the source page too.
    const refused = await act('/actions/sources/erp-csv/resync', { back: 'source' });
    expect(String(refused.headers.location)).toMatch(/^\/sources\/erp-csv\?notice=DASHBOARD_SOURCE_PAUSED/);
    expect(await sourcePage()).toContain('action="/actions/sources/erp-csv/resume"');
    const resume = await act('/actions/sources/erp-csv/resume', { back: 'source' });
    expect(String(resume.headers.location)).toBe('/sources/erp-csv?notice=resumed&source=erp-csv');
  });

  it('when a pass of the source runs, then its page offers Cancel, and Cancel asks its run to stop; with none running, nothing is asked', async () => {
    const runs = new RunsRepository(state.db);
    const none = await act('/actions/sources/erp-csv/cancel', { back: 'source' });
    expect(String(none.headers.location)).toBe('/sources/erp-csv?notice=nothing-running&source=erp-csv');

    const runId = await runs.start('erp-csv', 'manual', false);
    expect(await sourcePage()).toContain('action="/actions/sources/erp-csv/cancel"');
    const cancel = await act('/actions/sources/erp-csv/cancel', { back: 'source' });
    expect(String(cancel.headers.location)).toBe(
      `/sources/erp-csv?notice=cancel-requested&source=erp-csv&run=${runId}`,
    );
    expect(await runs.cancelRequest(runId)).toBe('ops from the dashboard');
    const page = await app.inject({ url: String(cancel.headers.location), headers: html });
    expect(page.body).toContain(
      `Cancel of run <a href="/runs/${runId}">#${runId}</a> of <b>erp-csv</b> asked`,
    );
    await runs.finish(runId, 'cancelled', {}, 'cancelled by ops from the dashboard');
  });

  it('when files wait in the drop folder, then the source page lists them: still being written, ready, or ignored', async () => {
    const at = (name: string, secondsAgo: number) => {
      writeFileSync(join(dropDir, name), 'sourceId\n');
      const when = new Date(NOW.getTime() - secondsAgo * 1000);
      utimesSync(join(dropDir, name), when, when);
    };
    at('invoices-new.csv', 10);
    at('accounts-old.csv', 3600);
    at('Kunden.txt', 3600);
    writeFileSync(join(dropDir, '.hidden.csv'), '');
    const page = await sourcePage();
    expect(page).toContain('<span class="count" data-field="waiting-count">3</span>');
    expect(page).toMatch(/data-waiting-file="invoices-new\.csv" data-state="writing"/);
    expect(page).toMatch(/data-waiting-file="accounts-old\.csv" data-state="ready"/);
    expect(page).toMatch(/data-waiting-file="Kunden\.txt" data-state="ignored"/);
    expect(page).toContain('unchanged for 60 s');
    expect(page).not.toContain('.hidden.csv');
  });

  it('when a re-sync found only files still being written, then its run says so instead of "succeeded 0/0/0/0"', async () => {
    const runs = new RunsRepository(state.db);
    const id = await runs.start('erp-csv', 'manual', false);
    await runs.finish(id, 'succeeded', {});
    await runs.addToCounts(id, { waitingFiles: { files: ['invoices-big.csv'], stableSeconds: 60 } });
    for (const url of ['/sources/erp-csv', '/']) {
      const body = (await app.inject({ url, headers: html })).body;
      expect(body, url).toContain('data-status="waiting">nothing read: files being written</span>');
      expect(body, url).toContain(
        '1 file still being written (taken once unchanged for 60 s), left for a later pass: <code>invoices-big.csv</code>',
      );
    }
  });

  it("when a run's log is empty, then its page says why: not written yet for a fresh run, pruned for an old one", async () => {
    const runs = new RunsRepository(state.db);
    const fresh = await runs.start('erp-csv', 'manual', false);
    await runs.finish(fresh, 'succeeded', {});
    const freshPage = (await app.inject({ url: `/runs/${fresh}`, headers: html })).body;
    expect(freshPage).toContain('No line written yet');
    expect(freshPage).not.toContain('pruned');
    await state.db
      .updateTable('runs')
      .set({ started_at: new Date('2025-10-01T00:00:00Z'), finished_at: new Date('2025-10-01T00:01:00Z') })
      .where('id', '=', fresh)
      .execute();
    expect((await app.inject({ url: `/runs/${fresh}`, headers: html })).body).toContain(
      'No line kept: the logs of old runs are pruned',
    );
  });

  it('when a run was interrupted before it wrote its counts, then its page counts the records it touched', async () => {
    const runs = new RunsRepository(state.db);
    const id = await runs.start('erp-csv', 'schedule', false);
    await new RunRecordsRepository(state.db).record(id, 'erp-csv', [
      { kind: 'account', sourceKey: 'C-1', outcome: 'created' },
      { kind: 'invoice', sourceKey: 'INV-1', outcome: 'created' },
      { kind: 'invoice', sourceKey: 'INV-2', outcome: 'failed' },
    ]);
    await runs.interruptInProgress();
    const page = (await app.inject({ url: `/runs/${id}`, headers: html })).body;
    expect(page).toContain('data-status="interrupted"');
    expect(page).toContain('counted from the records it touched');
    expect(page).toMatch(/<tr data-kind="invoices">.*?data-field="created">1<.*?data-field="failed">1</s);
    expect(page).toMatch(/<tr data-kind="accounts">.*?data-field="created">1</s);
  });

  it('when a user searches by invoice number or customer name, then the records are found, not only by source id', async () => {
    const recordMap = new RecordMapRepository(state.db);
    const save = (kind: 'account' | 'invoice', key: string, record: Record<string, unknown>) =>
      recordMap.save(
        'erp-csv',
        kind,
        {
          sourceKey: key,
          apiId: `api-${key}`,
          contentHash: 'h',
          syncedState: {},
          record: { kind, sourceId: key, ...record },
        },
        null,
      );
    await save('account', 'C-1', { fullName: 'Acme Corporation' });
    await save('account', 'C-2', { fullName: 'Globex' });
    await save('invoice', 'INV-1', { number: 'F-00001', accountSourceId: 'C-1' });
    await save('invoice', 'INV-2', { number: 'F-00002', accountSourceId: 'C-2' });

    const byNumber = (await app.inject({ url: '/records?source=erp-csv&q=f-00002', headers: html })).body;
    expect(byNumber).toContain('data-record="invoice:INV-2"');
    expect(byNumber).not.toContain('data-record="invoice:INV-1"');

    const byName = (await app.inject({ url: '/records?source=erp-csv&q=acme', headers: html })).body;
    expect(byName).toContain('data-hit="account:C-1"');
    expect(byName).toMatch(
      /data-hit="invoice:INV-1".*number <code data-field="number">F-00001<\/code>.*Acme Corporation/,
    );
    expect(byName).not.toContain('data-hit="invoice:INV-2"');
    expect(byName).toContain('Source id, invoice number or customer name');
  });
});
