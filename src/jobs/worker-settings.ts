import type { Config } from '../config/schema.js';

/** How the worker's queue behaves: what `queue.*` in the configuration sets, in milliseconds. */
export interface WorkerSettings {
  redisUrl: string;
  /** Prefix of every Redis key of the worker (BullMQ queues, source locks); several deployments can share a Redis. */
  prefix: string;
  /** Jobs one worker process runs at once (never two of the same source). */
  concurrency: number;
  /** A job whose worker stopped renewing its lock for this long is handed to another worker. */
  lockMs: number;
  /**
   * How often each worker runs BullMQ's stalled check (jobs whose lock expired: a crashed
   * worker's): `stalledCheckIntervalMs(lockMs, stalledCheckMs)`, so that a job whose worker died is
   * resumed within `lockSeconds + stalledCheckSeconds`.
   */
  stalledIntervalMs: number;
  /** Times a job may be recovered from a crashed worker before it fails for good. */
  maxStalledCount: number;
  /** Attempts of a job that fails with a transient error. */
  attempts: number;
  /** First retry delay; each next one doubles (exponential backoff). */
  backoffMs: number;
  /** On SIGTERM, how long running jobs may take to finish before they are left to another worker. */
  shutdownMs: number;
  /** Finished jobs kept in Redis for the dashboard (the oldest are removed beyond). */
  keepCompleted: number;
  keepFailed: number;
  /** When another job of the same source holds its lock, a job waits this long before trying again. */
  sourceBusyRetryMs: number;
}

/**
 * The `queue.*` keys the worker reads besides `redisUrl`. They are optional here so the worker
 * also runs with a configuration schema that does not list them yet; the defaults are the same.
 */
interface QueueTuning {
  prefix?: string;
  concurrency?: number;
  lockSeconds?: number;
  stalledCheckSeconds?: number;
  attempts?: number;
  backoffSeconds?: number;
  shutdownSeconds?: number;
}

export const WORKER_DEFAULTS = {
  prefix: 'receivables-sync',
  concurrency: 8,
  lockSeconds: 30,
  stalledCheckSeconds: 30,
  attempts: 5,
  backoffSeconds: 30,
  shutdownSeconds: 25,
} as const satisfies Required<QueueTuning>;

/** The worker's settings from a validated configuration; null when no Redis is configured. */
export function workerSettingsOf(config: Pick<Config, 'queue'>): WorkerSettings | null {
  const queue = config.queue as Config['queue'] & QueueTuning;
  if (!queue.redisUrl) return null;
  const seconds = (value: number | undefined, fallback: number) => Math.round((value ?? fallback) * 1000);
  const lockMs = seconds(queue.lockSeconds, WORKER_DEFAULTS.lockSeconds);
  const stalledCheckMs = seconds(queue.stalledCheckSeconds, WORKER_DEFAULTS.stalledCheckSeconds);
  return {
    redisUrl: queue.redisUrl,
    prefix: queue.prefix ?? WORKER_DEFAULTS.prefix,
    concurrency: queue.concurrency ?? WORKER_DEFAULTS.concurrency,
    lockMs,
    stalledIntervalMs: stalledCheckIntervalMs(lockMs, stalledCheckMs),
    maxStalledCount: 2,
    attempts: queue.attempts ?? WORKER_DEFAULTS.attempts,
    backoffMs: seconds(queue.backoffSeconds, WORKER_DEFAULTS.backoffSeconds),
    shutdownMs: seconds(queue.shutdownSeconds, WORKER_DEFAULTS.shutdownSeconds),
    keepCompleted: 1000,
    keepFailed: 5000,
    sourceBusyRetryMs: Math.min(5000, Math.max(250, Math.round(lockMs / 4))),
  };
}

/**
 * The period of BullMQ's stalled check that keeps the promise of `queue.stalledCheckSeconds`: a job
 * whose worker died is resumed at most `lock + stalledCheck` after (plus well under a second).
 *
 * BullMQ resumes such a job at the first check that finds its lock expired, and only if an earlier
 * check, after the last renewal of the lock, marked it as possibly stalled (each renewal clears
 * that mark). The checks of all workers share one `stalled-check` key that expires one `interval`
 * after the last check: a live worker whose tick comes while the dead worker's last check is still
 * that recent skips it, so the first check after a death can come `2 × interval` after it. Checking
 * every `interval` thus resumes a job within `max(3 × interval, lock + interval)` of its worker's
 * death: 90 s with 30 s and 30 s, where `lock + interval` (60 s) was meant. Checking every
 * `min(stalledCheck, (lock + stalledCheck) / 3)` brings it back to `lock + stalledCheck`.
 *
 * @example stalledCheckIntervalMs(30_000, 30_000) // 20_000: resumed within 60 s
 * @example stalledCheckIntervalMs(2_000, 1_000) // 1_000: resumed within 3 s
 */
export function stalledCheckIntervalMs(lockMs: number, stalledCheckMs: number): number {
  return Math.max(1, Math.floor(Math.min(stalledCheckMs, (lockMs + stalledCheckMs) / 3)));
}
