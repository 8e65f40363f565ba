import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningWorkerDaemon, startWorker } from '../../../src/app/worker.js';
import { loadConfig } from '../../../src/config/load.js';
import { ALERT_QUEUE } from '../../../src/jobs/alert-queue.js';
import { createLogger } from '../../../src/logging/logger.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { ACCOUNT_HEADER, accountRow, dropCsv } from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { deleteKeys, eventually, TEST_REDIS_URL } from '../../support/worker-process.js';
import { type AlertReceiver, startAlertReceiver } from './alerts-receiver.js';

const USER = 'ops';
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const auth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/**
 * Alerts as the worker sends them: the worker daemon in this process (real Redis, BullMQ, Postgres,
 * the sandbox), its alerts queued and delivered to a local receiver; a source failing three times
 * paused automatically, shown on the dashboard and resumed through its action.
 */
describe('alerts from the worker', () => {
  const prefix = `t-alerts-${randomBytes(4).toString('hex')}`;
  const schema = uniqueSchema('alerts_worker');
  // The secret parts of the webhook URLs, which must never be seen outside the requests.
  const hookSecret = `hk${randomBytes(12).toString('hex')}`;
  const chatSecret = `ch${randomBytes(12).toString('hex')}`;
  const logs: string[] = [];
  let dir: string;
  let missingDir: string;
  let receiver: AlertReceiver;
  let sandbox: TestSandbox;
  let daemon: RunningWorkerDaemon;
  let state: StateDatabase;
  let redis: Redis;
  let alertQueue: Queue;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-alerts-'));
    missingDir = join(dir, 'no-such-drop');
    // Three accounts without a currency: three validation failures, no API call.
    dropCsv(
      join(dir, 'bad-drop'),
      'accounts.csv',
      ACCOUNT_HEADER,
      [1, 2, 3].map((i) => accountRow(i).replace(',EUR,', ',,')),
    );
    receiver = await startAlertReceiver();
    receiver.failNext('/chat/', 1);
    sandbox = await startTestSandbox();
    const configFile = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      configFile,
      `sources:
  - { id: broken, type: csv, dropDir: ${missingDir}, stableSeconds: 0 }
  - { id: bad-rows, type: csv, dropDir: ${join(dir, 'bad-drop')}, stableSeconds: 0 }
alerts:
  targets:
    - { id: hook, type: webhook, urlEnv: TEST_ALERT_HOOK_URL }
    - { id: chat, type: slack, urlEnv: TEST_ALERT_CHAT_URL, events: [source.paused, run.new-failures] }
  newFailuresThreshold: 2
  pauseAfterFailedRuns: 3
  attempts: 3
  backoffSeconds: 0.05
`,
    );
    const loaded = loadConfig({
      file: configFile,
      env: {
        ...apiEnvOf(sandbox),
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL: TEST_REDIS_URL,
        DASHBOARD_HOST: '127.0.0.1',
        DASHBOARD_PORT: '0',
        DASHBOARD_USER: USER,
        DASHBOARD_PASSWORD: PASSWORD,
        TEST_ALERT_HOOK_URL: receiver.url(`/hooks/T0001/B0002/${hookSecret}`),
        TEST_ALERT_CHAT_URL: receiver.url(`/chat/${chatSecret}`),
      },
    });
    const capture = new Writable({
      write(chunk, _encoding, done) {
        logs.push(String(chunk));
        done();
      },
    });
    daemon = await startWorker(loaded, {
      logger: createLogger({ level: 'debug', format: 'json', destination: capture }),
      settings: { prefix, attempts: 1 },
    });
    state = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, schema, migrate: false });
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    alertQueue = new Queue(ALERT_QUEUE, { connection: redis, prefix });
  }, 60_000);

  afterAll(async () => {
    await daemon?.close();
    await alertQueue?.close();
    redis?.disconnect();
    await state?.close();
    await sandbox?.close();
    await receiver?.close();
    await deleteKeys(TEST_REDIS_URL, `${prefix}:*`);
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Queues a manual pass and waits until its job has finished (completed or failed). */
  const pass = async (sourceId: string) => {
    const { jobId } = await daemon.queues.enqueueSourceSync(sourceId, { trigger: 'manual' });
    const job = await daemon.queues.queue.getJob(jobId);
    await eventually(
      () => job!.getState(),
      (s) => s === 'completed' || s === 'failed',
      { what: `job ${jobId} of ${sourceId}` },
    );
    return (await daemon.queues.queue.getJob(jobId))!;
  };
  const types = (bodies: any[]) => bodies.map((b) => b.type).sort();
  /** Every alert job delivered or given up: nothing left to arrive. */
  const settled = () =>
    eventually(
      () => alertQueue.getJobCounts('waiting', 'active', 'delayed', 'prioritized'),
      (c) => Object.values(c).every((n) => n === 0),
      { what: 'alert queue drained' },
    );
  const sourceRow = (id: string) =>
    state.db.selectFrom('sources').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const page = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${daemon.dashboard!.url}${path}`, { headers: { authorization: auth, ...headers } });

  it('when a run records new failures beyond the threshold, then run.new-failures is told to both targets once', async () => {
    const run = (await pass('bad-rows')).returnvalue.runs[0]!;
    expect(run.failed).toBe(3);
    await eventually(
      async () => receiver.delivered('/chat/').length,
      (n) => n >= 1,
    );
    await settled();
    const [hook] = receiver.delivered('/hooks/');
    expect(receiver.delivered('/hooks/')).toHaveLength(1);
    expect(hook).toMatchObject({
      app: 'receivables-sync',
      type: 'run.new-failures',
      sourceId: 'bad-rows',
      details: { newFailures: 3, threshold: 2, runId: run.runId },
    });
    // Slack's shape: a fallback text and blocks.
    const [chat] = receiver.delivered('/chat/');
    expect(Object.keys(chat)).toEqual(['text', 'blocks']);
    expect(chat.text).toMatch(/^New failures: bad-rows: run #\d+ recorded 3 new failures \(threshold 2\)/);
    expect(chat.blocks.map((b: any) => b.type)).toEqual(['header', 'section', 'section', 'context']);
    // The first answer to the chat target was a 500: retried through the queue, then delivered once.
    expect(receiver.requests.filter((r) => r.path.startsWith('/chat/')).map((r) => r.answered)).toEqual([
      500, 200,
    ]);
    // The alerts' queue shows next to the sync queue: /metrics and bull-board.
    const metrics = await (await page('/metrics')).text();
    expect(metrics).toMatch(/receivables_sync_queue_jobs\{queue="alerts",state="completed"\} [1-9]/);
    const board = await (
      await page('/queues/api/queues?activeQueue=alerts&status=latest&page=1&jobsPerPage=10')
    ).json();
    expect((board as { queues: Array<{ name: string }> }).queues.map((q) => q.name)).toContain('alerts');
  });

  it('when a source fails 3 passes in a row, then run.failed is told once, the source is paused automatically and source.paused told once', async () => {
    for (let i = 0; i < 3; i++) expect(await (await pass('broken')).getState()).toBe('failed');
    await eventually(
      async () => receiver.delivered('/chat/').length,
      (n) => n >= 2,
      { what: 'source.paused on the chat target' },
    );
    await settled();
    const hook = receiver.delivered('/hooks/').filter((b) => b.sourceId === 'broken');
    expect(types(hook)).toEqual(['run.failed', 'source.paused']);
    expect(hook.find((b) => b.type === 'run.failed').details.errorCode).toBe('CSV_DROP_DIR_MISSING');
    expect(hook.find((b) => b.type === 'source.paused')).toMatchObject({
      details: { failedRuns: 3, lastError: expect.stringContaining(missingDir) },
    });
    // The chat target wants only pauses and new failures.
    expect(receiver.delivered('/chat/')[1].text).toMatch(
      /^Source paused automatically: broken paused automatically after 3 failed runs: the drop folder/,
    );
    expect(await sourceRow('broken')).toMatchObject({
      paused: true,
      paused_by: 'auto',
      pause_reason: expect.stringMatching(
        /^paused automatically after 3 failed runs: the drop folder .* does not exist/,
      ),
      paused_at: expect.any(Date),
    });
    // Paused: the next job does not run the source.
    expect((await pass('broken')).returnvalue).toEqual({ sourceId: 'broken', runs: [], skipped: 'paused' });
  });

  it('when the paused source is shown, then its row says why, and Resume through the dashboard clears it', async () => {
    const html = await (await page('/', { accept: 'text/html' })).text();
    expect(html).toMatch(
      /data-source="broken"[\s\S]*?data-paused-by="auto"[\s\S]*?paused automatically after 3 failed runs: the drop folder [^<]*no-such-drop[^<]* does not exist[\s\S]*?value="resume"/,
    );
    const status = (await (await page('/api/status', { accept: 'application/json' })).json()) as any;
    expect(status.sources.find((s: any) => s.id === 'broken').pause).toMatchObject({ by: 'auto' });

    const resumed = await fetch(`${daemon.dashboard!.url}/actions/sources/broken/resume`, {
      method: 'POST',
      headers: { authorization: auth, accept: 'application/json', 'x-csrf-token': status.csrfToken },
    });
    expect(resumed.status).toBe(200);
    expect(await resumed.json()).toEqual({ result: 'resumed', source: 'broken' });
    expect(await sourceRow('broken')).toMatchObject({
      paused: false,
      paused_by: null,
      pause_reason: null,
      resumed_at: expect.any(Date),
    });
    const after = await (await page('/', { accept: 'text/html' })).text();
    expect(after).not.toContain('paused automatically');

    // The count starts again: one more failed pass does not pause it, nor repeat run.failed within the hour.
    await pass('broken');
    await settled();
    expect((await sourceRow('broken')).paused).toBe(false);
    expect(types(receiver.delivered('/hooks/').filter((b) => b.sourceId === 'broken'))).toEqual([
      'run.failed',
      'source.paused',
    ]);
  });

  it('when alerts were delivered and retried, then no webhook secret is in the logs or in Redis', async () => {
    const text = logs.join('');
    expect(text).toContain('"alert.delivered"');
    expect(text).toMatch(/"target":"chat"[^\n]*alert delivery failed, will be retried/);
    const jobs = JSON.stringify(await alertQueue.getJobs(['completed', 'failed']));
    expect(jobs).toContain('"targetId":"chat"');
    for (const secret of [hookSecret, chatSecret]) {
      expect(text).not.toContain(secret);
      expect(jobs).not.toContain(secret);
    }
  });
});
