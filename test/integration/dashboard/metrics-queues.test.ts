import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MeteredRateLimiter } from '../../../src/api/rate-limit/types.js';
import { BullSyncQueues } from '../../../src/jobs/queues.js';
import { openQueueConnection } from '../../../src/jobs/redis-connection.js';
import { SyncMetrics } from '../../../src/metrics/sync-metrics.js';
import { RunsRepository } from '../../../src/state/runs.js';
import { lastSuccessfulRuns } from '../../../src/state/status-queries.js';
import { basic, csrfTokenOf, ORIGIN, openTestState, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };
const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

describe('dashboard metrics and bull-board (real Redis)', () => {
  let state: State;
  let connection: Redis;
  let queues: BullSyncQueues;
  let metrics: SyncMetrics;
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    state = await openTestState('dash_metrics');
    connection = openQueueConnection({
      url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      logger: silentLogger,
    });
    queues = new BullSyncQueues({
      connection,
      settings: {
        prefix: `test-dash-${randomBytes(4).toString('hex')}`,
        attempts: 1,
        backoffMs: 1000,
        keepCompleted: 10,
        keepFailed: 10,
      },
      logger: silentLogger,
    });
    metrics = new SyncMetrics({
      queues: () => queues.queues,
      lastSuccess: lastSuccessfulRuns(state.db),
      logger: silentLogger,
    });
    app = testApp(state, { queues, metrics });
  });
  afterAll(async () => {
    await app.close();
    await queues.queue.obliterate({ force: true });
    await queues.close();
    await connection.quit();
    await state.close();
  });

  it('when Re-sync is pressed, then a job waits in the real queue and /metrics shows the queue depth', async () => {
    const token = await csrfTokenOf(app, auth);
    const res = await app.inject({
      method: 'POST',
      url: '/actions/sources/erp-csv/resync',
      headers: { ...auth, accept: 'application/json', 'x-csrf-token': token },
    });
    expect(res.statusCode).toBe(202);
    expect(await queues.queue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    const text = (await app.inject({ url: '/metrics', headers: auth })).body;
    expect(text).toContain('receivables_sync_queue_jobs{queue="sync",state="waiting"} 1');
    const status = (await app.inject({ url: '/api/status', headers: auth })).json();
    expect(status.queues).toEqual([
      { name: 'sync', counts: expect.objectContaining({ waiting: 1, active: 0 }) },
    ]);
  });

  it('when the sync reports through the hooks, then requests by status, 429s, limiter waits, records and last success are exported', async () => {
    const calls: string[] = [];
    const fake: MeteredRateLimiter = {
      acquire: async () => 1500,
      observe: async (_key, info) => void calls.push(`observe ${info.status}`),
      stats: () => ({ acquired: 0, waitedMsTotal: 0, rateLimited: 0, pauses: 0, foreignRequests: 0 }),
      close: async () => {},
    };
    const limiter = metrics.instrumentLimiter(fake);
    expect(await limiter.acquire('k')).toBe(1500);
    await limiter.observe('k', { status: 201 });
    await limiter.observe('k', { status: 201 });
    await limiter.observe('k', { status: 429, retryAfterSeconds: 3 });
    expect(calls).toEqual(['observe 201', 'observe 201', 'observe 429']);
    const service = metrics.instrumentService({
      syncSource: async () => [
        {
          sourceId: 'erp-csv',
          runId: '1',
          counts: {
            accounts: { ...zero, created: 2 },
            invoices: { ...zero, unchanged: 5, failed: 1 },
            creditNotes: zero,
          },
          plan: [],
          failures: [],
          abandoned: [],
          warnings: [],
          skipped: [],
        },
      ],
      retryFailures: async () => ({ summary: null, needData: 0, rejectedFiles: [] }),
      resyncRecord: async () => Promise.reject(new Error('API down')),
      recoverInterrupted: async () => [],
      hasRecord: async () => true,
    });
    await service.syncSource('erp-csv');
    await expect(service.resyncRecord('erp-csv', 'invoice', 'INV-1')).rejects.toThrow('API down');
    const runs = new RunsRepository(state.db);
    const run = await runs.start('erp-csv', 'manual', false);
    await runs.finish(run, 'succeeded', {});

    const res = await app.inject({ url: '/metrics', headers: auth });
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toContain('receivables_sync_api_responses_total{status="201"} 2');
    expect(text).toContain('receivables_sync_api_responses_total{status="429"} 1');
    expect(text).toContain('receivables_sync_api_rate_limited_total 1');
    expect(text).toContain('receivables_sync_limiter_wait_seconds_total 1.5');
    expect(text).toContain(
      'receivables_sync_records_total{source="erp-csv",kind="account",outcome="created"} 2',
    );
    expect(text).toContain(
      'receivables_sync_records_total{source="erp-csv",kind="invoice",outcome="failed"} 1',
    );
    expect(text).toContain('receivables_sync_api_requests_total 3');
    expect(text).toContain('receivables_sync_runs_total{source="erp-csv",status="partial"} 1');
    expect(text).toContain('receivables_sync_runs_total{source="erp-csv",status="failed"} 1');
    expect(text).toMatch(/receivables_sync_last_success_timestamp_seconds\{source="erp-csv"\} \d{10}/);
  });

  it('when the runtime counters are watched, then requests, 429s and waits are read from them at each scrape', async () => {
    const limiter = { acquired: 40, waitedMsTotal: 12_500, rateLimited: 0, pauses: 0, foreignRequests: 3 };
    const own = new SyncMetrics();
    own.watch({ runtimeStats: () => ({ requests: 41, limiter }) });
    let text = (await own.text()).body;
    expect(text).toContain('receivables_sync_api_requests_total 41');
    expect(text).toContain('receivables_sync_limiter_wait_seconds_total 12.5');
    expect(text).toContain('receivables_sync_api_rate_limited_total 0');
    limiter.rateLimited = 1;
    text = (await own.text()).body;
    expect(text).toContain('receivables_sync_api_rate_limited_total 1');
  });

  it('when a source only ever finished partial passes, then it still has a last success (its refused rows are alerted apart); a failed pass never counts', async () => {
    const runs = new RunsRepository(state.db);
    const partial = await runs.start('always-partial', 'schedule', false);
    await runs.finish(partial, 'partial', {});
    const failed = await runs.start('never-runs', 'schedule', false);
    await runs.finish(failed, 'failed', {}, 'the API is unreachable');
    const last = await lastSuccessfulRuns(state.db)();
    expect(last.map((l) => l.sourceId)).toContain('always-partial');
    expect(last.map((l) => l.sourceId)).not.toContain('never-runs');
  });

  it('when no pass has run yet, then every series declared has a sample, at 0, for each configured source', async () => {
    const own = new SyncMetrics({ sourceIds: ['erp-csv', 'billing-db'], lastSuccess: async () => [] });
    const text = (await own.text()).body;
    const declared = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    expect(declared.length).toBeGreaterThanOrEqual(7);
    const unsampled = declared.filter(
      (name) =>
        !new RegExp(`^${name}(\\{[^}]*\\})? `, 'm').test(text) && name !== 'receivables_sync_queue_jobs',
    );
    // Queue depths need queues: a process without them (sync --once) declares no queue.
    expect(unsampled).toEqual([]);
    expect(text).toContain(
      'receivables_sync_records_total{source="billing-db",kind="creditNote",outcome="failed"} 0',
    );
    expect(text).toContain('receivables_sync_runs_total{source="erp-csv",status="failed"} 0');
    expect(text).toContain('receivables_sync_api_responses_total{status="429"} 0');
    expect(text).toContain('receivables_sync_last_success_timestamp_seconds{source="erp-csv"} 0');
  });

  it("when the runtime's answers by status are watched, then api_responses_total reads them without any hook", async () => {
    const own = new SyncMetrics();
    const responses = new Map([[201, 5]]);
    own.watch({
      runtimeStats: () => ({
        requests: 5,
        limiter: { acquired: 5, waitedMsTotal: 0, rateLimited: 0, pauses: 0, foreignRequests: 0 },
        responses,
      }),
    });
    expect((await own.text()).body).toContain('receivables_sync_api_responses_total{status="201"} 5');
    responses.set(201, 6).set(418, 1);
    const text = (await own.text()).body;
    expect(text).toContain('receivables_sync_api_responses_total{status="201"} 6');
    expect(text).toContain('receivables_sync_api_responses_total{status="418"} 1');
  });

  it('when /readyz is called, then the state DB and Redis are checked', async () => {
    const res = await app.inject({ url: '/readyz' });
    expect(res.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'ok' } });
  });

  it('when bull-board is opened, then it needs the same credentials and lists the sync queue', async () => {
    expect((await app.inject({ url: '/queues' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/queues/api/queues' })).statusCode).toBe(401);
    const ui = await app.inject({ url: '/queues', headers: auth });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
    const api = await app.inject({
      url: '/queues/api/queues?activeQueue=sync&status=waiting&page=1',
      headers: auth,
    });
    expect(api.statusCode).toBe(200);
    expect(api.json().queues.map((q: any) => q.name)).toContain('sync');
  });

  it('when a bull-board action is posted from another site, then it is refused before bull-board sees it', async () => {
    const res = await app.inject({
      method: 'PUT',
      url: '/queues/api/queues/sync/pause',
      headers: { ...auth, origin: 'https://evil.example' },
    });
    expect(res.statusCode).toBe(403);
    expect(await queues.queue.isPaused()).toBe(false);
    // Same origin is not enough: bull-board is read-only by default (see bull-board-admin.test.ts).
    const same = await app.inject({
      method: 'PUT',
      url: '/queues/api/queues/sync/pause',
      headers: { ...auth, origin: ORIGIN },
    });
    expect(same.statusCode).toBe(403);
    expect(await queues.queue.isPaused()).toBe(false);
  });
});
