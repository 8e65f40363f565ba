import { hostname } from 'node:os';
import { UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { settlesWithin } from '../domain/settle.js';
import { SYNC_QUEUE, type SyncJobName } from './job-keys.js';
import type { createSyncProcessor } from './sync-processor.js';
import type { SyncJob, SyncJobResult } from './types.js';
import type { WorkerSettings } from './worker-settings.js';

export type SyncWorker = Worker<SyncJob, SyncJobResult, SyncJobName>;

export interface SyncWorkerProps {
  /** Shared connection (see `openQueueConnection`); the worker opens its own blocking one from it. */
  connection: Redis;
  settings: Pick<
    WorkerSettings,
    | 'prefix'
    | 'concurrency'
    | 'lockMs'
    | 'stalledIntervalMs'
    | 'maxStalledCount'
    | 'attempts'
    | 'keepCompleted'
    | 'keepFailed'
  >;
  processor: ReturnType<typeof createSyncProcessor>;
  logger: Logger;
}

/**
 * The consumer side: a BullMQ worker on the `sync` queue. Its job locks are renewed while a job
 * runs; when a worker dies, another one's stalled check finds the expired lock and puts the job
 * back in the queue (at most `maxStalledCount` times), where the next free worker takes it.
 */
export async function startSyncWorker(props: SyncWorkerProps): Promise<SyncWorker> {
  const { settings, logger } = props;
  const worker: SyncWorker = new Worker<SyncJob, SyncJobResult, SyncJobName>(SYNC_QUEUE, props.processor, {
    connection: props.connection,
    prefix: settings.prefix,
    name: `${hostname()}:${process.pid}`,
    concurrency: settings.concurrency,
    lockDuration: settings.lockMs,
    stalledInterval: settings.stalledIntervalMs,
    maxStalledCount: settings.maxStalledCount,
    removeOnComplete: { count: settings.keepCompleted },
    removeOnFail: { count: settings.keepFailed },
  });
  worker.on('failed', (job, error) => {
    if (!job) return;
    const permanent = error instanceof UnrecoverableError || error.name === 'UnrecoverableError';
    const willRetry = !permanent && job.attemptsMade < (job.opts.attempts ?? settings.attempts);
    const fields = {
      jobId: job.id,
      job: job.name,
      sourceId: job.data.sourceId,
      attemptsMade: job.attemptsMade,
      willRetry,
      err: error.message,
    };
    if (willRetry) logger.warn(fields, 'job failed, will be retried');
    else logger.error({ ...fields, permanent }, 'job failed for good');
  });
  worker.on('stalled', (jobId) => {
    logger.warn({ jobId }, 'job stalled (its worker stopped renewing the lock): back in the queue');
  });
  // Connection errors are reported by the connection itself (watchConnection); the worker retries.
  worker.on('error', (error) => logger.debug({ err: error.message }, 'worker error'));
  await worker.waitUntilReady();
  return worker;
}

/**
 * Stops taking jobs and waits up to `limitMs` for the running ones, then closes the worker.
 * Returns false when jobs were still running at the limit: the worker is then left as it is, and
 * the process must end without closing what those jobs use (the state DB, the API client), or the
 * pass would fail half-way and settle its file as unreadable. Their locks are no longer renewed
 * once the process is gone: another worker resumes them, the same path as after a crash.
 */
export async function closeSyncWorker(worker: SyncWorker, limitMs: number, logger: Logger): Promise<boolean> {
  const finished = await settlesWithin(worker.pause(), limitMs);
  if (!finished) {
    logger.warn(
      { limitSeconds: limitMs / 1000 },
      'jobs still running at the shutdown limit: left for another worker',
    );
    return false;
  }
  await settlesWithin(worker.close(), 5000);
  return true;
}
