import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileSources } from '../../../src/app/reconcile.js';
import { openSyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import { type RunningWorkerDaemon, startWorker } from '../../../src/app/worker.js';
import { type LoadedConfig, loadConfig } from '../../../src/config/load.js';
import { SYNC_QUEUE } from '../../../src/jobs/job-keys.js';
import { ReconcileSchedules } from '../../../src/jobs/reconcile-schedules.js';
import { SourceLock } from '../../../src/jobs/source-lock.js';
import { createLogger } from '../../../src/logging/logger.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { PausedSources } from '../../../src/state/paused-sources.js';
import { type ReconciliationRow, ReconciliationsRepository } from '../../../src/state/reconciliations.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { deleteKeys, eventually, TEST_REDIS_URL } from '../../support/worker-process.js';

/**
 * The worker's reconciliations, in this process over real Redis, BullMQ, Postgres and the sandbox:
 * the `reconcile.schedule` cron fires and stores a reconciliation; the on-demand job waits for the
 * source lock a pass holds; a paused source is skipped, saying so; `reconcile --repair`'s use case
 * waits for the same lock.
 */
describe('worker: scheduled and on-demand reconciliations', () => {
  const logger = createLogger({ level: 'silent' });
  const schema = uniqueSchema('reconcile_jobs');
  const prefix = `t-reconcile-jobs-${randomBytes(4).toString('hex')}`;
  let dir: string;
  let sandbox: TestSandbox;
  let state: StateDatabase;
  let repo: ReconciliationsRepository;
  let redis: Redis;
  let daemon: RunningWorkerDaemon | undefined;

  /** The configuration with `extra` under the source (its `reconcile:` block). */
  const configWith = (extra: string): LoadedConfig => {
    const file = join(dir, `config-${randomBytes(3).toString('hex')}.yaml`);
    writeFileSync(
      file,
      `queue:\n  prefix: ${prefix}\nsources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${join(dir, 'drop')}\n    stableSeconds: 0\n${extra}`,
    );
    return loadConfig({
      file,
      env: {
        ...apiEnvOf(sandbox),
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL: TEST_REDIS_URL,
        LOG_LEVEL: 'silent',
      },
    });
  };
  const reconciliations = async (): Promise<ReconciliationRow[]> => repo.recent('erp-csv', 100);
  /** The job once BullMQ marked it finished (completed or failed), with its return value. */
  const finishedJob = async (jobId: string, what: string) =>
    (await eventually(
      () => daemon!.queues.queue.getJob(jobId),
      (job) => job?.finishedOn !== undefined,
      { timeoutMs: 10_000, what },
    ))!;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-reconcile-jobs-'));
    sandbox = await startTestSandbox();
    state = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, schema });
    repo = new ReconciliationsRepository(state.db);
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });

    // A first pass: 4 accounts; then one is deleted on the service by hand.
    const loaded = configWith('');
    dropCsv(
      join(dir, 'drop'),
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 4).map((i) => accountRow(i)),
    );
    const once = await openSyncRuntime(loaded, logger);
    try {
      await syncServiceOf(once, loaded.config.sources).syncSource('erp-csv', { trigger: 'once' });
    } finally {
      await once.close();
    }
    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, filters: 'source:isNotEmpty', first: 100 },
    });
    const c2 = (accounts.body.nodes as any[]).find((a) => a.source.sourceId === 'C-2');
    expect((await sandbox.call('DELETE', `/accounts/${c2.id}`)).status).toBe(204);
  }, 60_000);

  afterAll(async () => {
    await daemon?.close();
    redis?.disconnect();
    await deleteKeys(TEST_REDIS_URL, `${prefix}:*`);
    await state?.close();
    await dropSchema(schema);
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when reconcile.schedule fires, then the worker stores a scheduled report-only reconciliation naming the missing account', async () => {
    daemon = await startWorker(configWith("    reconcile:\n      schedule: '* * * * * *'\n"), {
      logger,
      dashboard: false,
      settings: { attempts: 1, sourceBusyRetryMs: 200 },
    });
    expect(daemon.reconcileScheduled).toEqual(['erp-csv']);
    const [row] = await eventually(
      async () => (await reconciliations()).filter((r) => r.trigger === 'schedule' && r.status === 'done'),
      (rows) => rows.length > 0,
      { timeoutMs: 20_000, what: 'a scheduled reconciliation' },
    );
    await daemon.close();
    daemon = undefined;
    // Ticks queued after that one must not run in the next test's worker (nor swallow its job).
    const queue = new Queue(SYNC_QUEUE, { connection: redis, prefix });
    await queue.obliterate({ force: true });
    await queue.close();
    expect(row!.repair).toBe(false);
    expect(row!.counts.missing).toMatchObject({ account: 1, invoice: 0, creditNote: 0 });
    expect(row!.drift).toBe(1);
    expect(row!.items).toEqual([
      expect.objectContaining({ category: 'missing', kind: 'account', sourceKey: 'C-2' }),
    ]);
    // Report only: the account is still missing on the service.
    expect((await sandbox.admin('GET', '/stats')).accounts).toBe(3);
  }, 40_000);

  it('when a pass holds the source lock, then the on-demand reconciliation waits for it, then runs', async () => {
    daemon = await startWorker(configWith(''), {
      logger,
      dashboard: false,
      settings: { attempts: 1, sourceBusyRetryMs: 200 },
    });
    expect(daemon.reconcileScheduled).toEqual([]);
    const before = (await reconciliations()).length;
    // Held as a pass holds it (the worker's own lock, same prefix).
    const lock = new SourceLock({ redis, prefix, ttlMs: 10_000, logger });
    const pass = await lock.acquire('erp-csv', 'a-pass', { pass: true });
    expect(pass).not.toBeNull();
    let released: number;
    const { jobId } = await daemon.queues.enqueueSourceReconcile('erp-csv', { trigger: 'dashboard' });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      // Still waiting, not run, nothing stored. The job goes round delayed -> waiting -> active
      // (a look at the lock) every 200 ms: on a loaded machine a look can be under way here.
      expect((await reconciliations()).length).toBe(before);
      expect(await daemon.queues.queue.getJobState(jobId)).toMatch(/delayed|waiting|active/);
      expect((await daemon.queues.queue.getJob(jobId))?.finishedOn).toBeUndefined();
    } finally {
      // Released whatever happened above: a lock left held would fail the next tests too.
      released = Date.now();
      await pass!.release({ passFinished: true });
    }
    const rows = await eventually(
      async () => (await reconciliations()).filter((r) => r.trigger === 'dashboard' && r.status === 'done'),
      (r) => r.length > 0,
      { timeoutMs: 15_000, what: 'the on-demand reconciliation' },
    );
    expect(rows[0]!.startedAt.getTime()).toBeGreaterThanOrEqual(released - 50);
    expect(rows[0]!.counts.missing!.account).toBe(1);
    // The job stores its reconciliation, then returns: BullMQ marks it completed, with its return
    // value, a moment after the row is there.
    const job = await finishedJob(jobId, 'the on-demand job completed');
    expect(job.returnvalue).toMatchObject({
      sourceId: 'erp-csv',
      reconcile: { reconciliationId: rows[0]!.id, repaired: false, drift: 1, found: 1 },
    });
  }, 40_000);

  it('when the source is paused, then the on-demand job is skipped (saying so) and a tick enqueues nothing', async () => {
    const paused = new PausedSources(state.db);
    await paused.set('erp-csv', 'csv', true, { by: 'user', reason: 'paused by a test' });
    try {
      const before = (await reconciliations()).length;
      const { jobId } = await daemon!.queues.enqueueSourceReconcile('erp-csv', {
        trigger: 'dashboard',
        repair: true,
      });
      const job = await finishedJob(jobId, 'the paused job finished');
      expect(job.returnvalue).toEqual({ sourceId: 'erp-csv', runs: [], skipped: 'paused' });
      expect((await reconciliations()).length).toBe(before);

      const ticks = new ReconcileSchedules({
        sources: configWith("    reconcile:\n      schedule: '0 3 * * *'\n").config.sources,
        queues: daemon!.queues,
        isPaused: (id) => paused.isPaused(id),
        logger,
      });
      expect(await ticks.exec('erp-csv', new Date())).toEqual({
        sourceId: 'erp-csv',
        enqueued: false,
        reason: 'paused',
      });
    } finally {
      await paused.set('erp-csv', 'csv', false, { by: 'user', reason: null });
    }
  }, 30_000);

  it('when reconcile --repair runs while a worker job holds the lock, then it waits and fails with SOURCE_BUSY, and repairs once the lock is free', async () => {
    await daemon?.close();
    daemon = undefined;
    const loaded = configWith('');
    const lock = new SourceLock({ redis, prefix, ttlMs: 10_000, logger });
    const pass = await lock.acquire('erp-csv', 'another-pass', { pass: true });
    const runtime = await openSyncRuntime(loaded, logger);
    try {
      const started = Date.now();
      await expect(
        reconcileSources(runtime, ['erp-csv'], { repair: true, trigger: 'cli', lockWaitMs: 1000 }),
      ).rejects.toMatchObject({ code: 'SOURCE_BUSY' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
      expect((await sandbox.admin('GET', '/stats')).accounts).toBe(3);
      await pass!.release({ passFinished: true });
      const [outcome] = await reconcileSources(runtime, ['erp-csv'], { repair: true, trigger: 'cli' });
      expect(outcome!.repaired).toBe(true);
      expect(outcome!.drift).toBe(0);
      expect((await sandbox.admin('GET', '/stats')).accounts).toBe(4);
      // The lock is free again for the worker.
      const after = await lock.acquire('erp-csv', 'next-pass', { pass: false });
      expect(after).not.toBeNull();
      await after!.release();
    } finally {
      await runtime.close();
    }
  }, 30_000);
});
