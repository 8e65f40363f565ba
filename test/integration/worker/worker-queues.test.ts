import { randomBytes } from 'node:crypto';
import { type Job, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkError } from '../../../src/api/errors.js';
import type { SourceConfig } from '../../../src/config/schema.js';
import { SYNC_QUEUE } from '../../../src/jobs/job-keys.js';
import { BullSyncQueues } from '../../../src/jobs/queues.js';
import { SourceSchedules } from '../../../src/jobs/schedules.js';
import { SourceLock } from '../../../src/jobs/source-lock.js';
import { createSyncProcessor, type SyncUseCases } from '../../../src/jobs/sync-processor.js';
import { closeSyncWorker, type SyncWorker, startSyncWorker } from '../../../src/jobs/sync-worker.js';
import { CsvSourceError } from '../../../src/sources/csv/errors.js';
import { deleteKeys, eventually, TEST_REDIS_URL } from '../../support/worker-process.js';

/** The queue layer in this process, over the real Redis, with fake use cases in place of the sync. */
describe('worker queues: deduplication, the source lock, retries', () => {
  const prefix = `t-worker-queues-${randomBytes(4).toString('hex')}`;
  const logger = pino({ level: 'silent' });
  const settings = {
    prefix,
    attempts: 3,
    backoffMs: 50,
    keepCompleted: 1000,
    keepFailed: 5000,
    concurrency: 2,
    lockMs: 2000,
    stalledIntervalMs: 1000,
    maxStalledCount: 2,
  };
  const sources = [
    { id: 'erp-csv', type: 'csv', dropDir: '/nonexistent', stableSeconds: 0, mapping: {} },
    { id: 'other', type: 'csv', dropDir: '/nonexistent', stableSeconds: 0, mapping: {} },
    { id: 'paused', type: 'csv', dropDir: '/nonexistent', stableSeconds: 0, mapping: {} },
  ] as SourceConfig[];
  const connections: Redis[] = [];
  const connect = () => {
    const redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
    connections.push(redis);
    return redis;
  };
  let queues: BullSyncQueues;
  let events: QueueEvents;
  let worker: SyncWorker | undefined;
  /** What the fake use cases do on their next call, per source. */
  const behaviour = new Map<string, Array<() => Promise<void>>>();
  const calls: string[] = [];
  const service: SyncUseCases = {
    syncSource: async (sourceId) => {
      calls.push(`sync ${sourceId}`);
      await behaviour.get(sourceId)?.shift()?.();
      return [];
    },
    retryFailures: async (sourceId) => {
      calls.push(`retry ${sourceId}`);
      return { summary: null, needData: 0, rejectedFiles: [] };
    },
    resyncRecord: async () => {
      throw new Error('not used');
    },
    recoverInterrupted: async () => [],
    hasRecord: async () => true,
  };

  beforeAll(async () => {
    queues = new BullSyncQueues({ connection: connect(), settings, logger });
    events = new QueueEvents(SYNC_QUEUE, { connection: connect(), prefix });
    await events.waitUntilReady();
  });
  afterAll(async () => {
    if (worker) await closeSyncWorker(worker, 2000, logger);
    await events?.close();
    await queues?.close();
    await deleteKeys(TEST_REDIS_URL, `${prefix}:*`);
    for (const redis of connections) redis.disconnect();
  });

  const startWorker = async () => {
    const connection = connect();
    worker = await startSyncWorker({
      connection,
      settings,
      logger,
      processor: createSyncProcessor({
        service,
        sources,
        lock: new SourceLock({ redis: connection, prefix, ttlMs: 2000, logger }),
        // No state DB here: no pass is ever live in it (pass-fence.test.ts covers it).
        passes: { live: async () => [], startedAfter: async () => null },
        logger,
        isPaused: async (id) => id === 'paused',
        sourceBusyRetryMs: 100,
      }),
    });
  };
  const finished = (jobId: string) =>
    queues.queue.getJob(jobId).then((job) => (job as Job).waitUntilFinished(events, 10_000));

  it('when a pass is enqueued while one is pending, then nothing is added and the pending job is answered', async () => {
    const first = await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });
    const second = await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });
    const other = await queues.enqueueSourceSync('other');
    expect(first.deduplicated).toBe(false);
    expect(second).toEqual({ jobId: first.jobId, deduplicated: true });
    expect(other.deduplicated).toBe(false);
    expect(await queues.queue.getWaitingCount()).toBe(2);
  });

  it('when a job is queued, then it carries the connection its source syncs through (bull-board shows it), and its deduplication stays per source', async () => {
    const connected = new BullSyncQueues({
      connection: connect(),
      settings,
      logger,
      connectionOf: (id) => (id === 'other' ? 'client-acme' : 'default'),
    });
    await queues.queue.obliterate({ force: true });
    const acme = await connected.enqueueSourceReconcile('other', { trigger: 'dashboard' });
    const again = await connected.enqueueSourceReconcile('other', { trigger: 'dashboard' });
    const own = await connected.enqueueFailureRetry('erp-csv');
    expect(again).toEqual({ jobId: acme.jobId, deduplicated: true });
    expect((await queues.queue.getJob(acme.jobId))?.data).toMatchObject({
      sourceId: 'other',
      connection: 'client-acme',
    });
    expect((await queues.queue.getJob(own.jobId))?.data).toMatchObject({
      sourceId: 'erp-csv',
      connection: 'default',
    });
    await connected.close();
    await queues.queue.obliterate({ force: true });
  });

  it('when two processes fire the same tick, then the tick is queued once', async () => {
    const tick = new Date('2030-01-01T00:00:00Z');
    const schedulers = [0, 1].map(
      () =>
        new SourceSchedules({
          sources,
          queues: new BullSyncQueues({ connection: connect(), settings, logger }),
          isPaused: async () => false,
          logger,
        }),
    );
    await queues.queue.obliterate({ force: true });
    const outcomes = await Promise.all(schedulers.map((s) => s.exec('other', tick)));
    expect(outcomes.map((o) => o.enqueued && o.jobId)).toEqual([
      `source-sync.other.t${tick.getTime() / 1000}`,
      `source-sync.other.t${tick.getTime() / 1000}`,
    ]);
    expect(await queues.queue.getWaitingCount()).toBe(1);
  });

  it('when the pass is done, then the next enqueue adds a new one', async () => {
    await startWorker();
    const { jobId } = await queues.enqueueSourceSync('erp-csv');
    await finished(jobId);
    const next = await queues.enqueueSourceSync('erp-csv');
    expect(next.deduplicated).toBe(false);
    expect(next.jobId).not.toBe(jobId);
    await finished(next.jobId);
  });

  it('when another job of the source holds its lock, then the job waits without spending an attempt', async () => {
    const holder = new SourceLock({ redis: connect(), prefix, ttlMs: 5000, logger });
    const lease = await holder.acquire('erp-csv', 'someone-else', { pass: false });
    expect(lease).not.toBeNull();
    calls.length = 0;
    const { jobId } = await queues.enqueueFailureRetry('erp-csv');
    await eventually(
      () => queues.queue.getJobState(jobId),
      (state) => state === 'delayed',
      { what: 'the job delayed' },
    );
    expect(calls).toEqual([]);
    await lease!.release();
    await finished(jobId);
    // One attempt ran; the waits for the lock spent none.
    const job = await queues.queue.getJob(jobId);
    expect(job?.attemptsMade).toBe(1);
    expect(calls).toEqual(['retry erp-csv']);
  });

  it('when a pass fails with a transient error, then it is retried with backoff and succeeds', async () => {
    behaviour.set('other', [
      async () => {
        throw new NetworkError('connection reset');
      },
    ]);
    const { jobId } = await queues.enqueueSourceSync('other');
    await finished(jobId);
    const job = await queues.queue.getJob(jobId);
    expect(job?.attemptsMade).toBe(2);
    expect(await job?.getState()).toBe('completed');
  });

  it.each([
    ['a permanent source error', 'other', 'CSV_DROP_DIR_MISSING: the drop folder does not exist: /x'],
    ['an unknown source', 'gone', 'no source "gone" in the configuration'],
  ])('when a job meets %s, then it fails at once without retry', async (_case, sourceId, reason) => {
    behaviour.set('other', [
      async () => {
        throw new CsvSourceError('CSV_DROP_DIR_MISSING', 'the drop folder does not exist: /x');
      },
    ]);
    const { jobId } = await queues.enqueueSourceSync(sourceId);
    await expect(finished(jobId)).rejects.toThrow(reason);
    const job = await queues.queue.getJob(jobId);
    expect(await job?.getState()).toBe('failed');
    expect(job?.attemptsMade).toBe(1);
  });

  it('when its source is paused, then its job finishes without syncing', async () => {
    calls.length = 0;
    const { jobId } = await queues.enqueueSourceSync('paused');
    expect(await finished(jobId)).toEqual({ sourceId: 'paused', runs: [], skipped: 'paused' });
    expect(calls).toEqual([]);
  });
});
