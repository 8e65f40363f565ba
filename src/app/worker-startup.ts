import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { AppError } from '../domain/errors.js';
import { RedisUnavailableError } from '../domain/redis-unavailable.js';
import { settlesWithin } from '../domain/settle.js';
import { redactedUrl } from '../jobs/redis-connection.js';
import { isConnectionLoss } from '../state/state-errors.js';
import type { WorkerDependency, WorkerReadiness } from './worker-readiness.js';

/**
 * The worker's start through an outage: it waits for Redis and the state DB as long as it takes,
 * retrying with backoff, each attempt told to the readiness (`/readyz`, `worker.waiting`, the alert
 * when it lasts). Only what no wait can heal ends the start: a configuration error, a failed
 * migration.
 */

/** The wait before the next attempt at start: 1 s, doubling, at most 15 s. */
export const startRetryDelayMs = (attempt: number): number =>
  Math.min(1000 * 2 ** Math.min(attempt, 4), 15_000);

/** How long one wait for Redis lasts before `/readyz` says it is missing (ioredis reconnects by itself meanwhile). */
const REDIS_ATTEMPT_MS = 2000;

/** Whether an error of opening a dependency may pass by itself (an outage), rather than end the start. */
export function isStartOutage(error: unknown): boolean {
  return error instanceof AppError ? error.retryable : isConnectionLoss(error);
}

/** The shutdown stopped the start before the worker ran. */
export class WorkerStartStoppedError extends AppError {
  constructor() {
    super('WORKER_START_STOPPED', 'the worker was stopped before it started');
  }
}

export interface UntilRedisProps {
  connection: Redis;
  url: string;
  readiness: WorkerReadiness;
  signal: AbortSignal;
}

/**
 * Waits for the first answer of Redis (`PING`), however long; the connection reconnects by itself
 * (`reconnectDelayMs`). Rejects when `signal` aborts or the connection is closed.
 */
export async function untilRedisAnswers(props: UntilRedisProps): Promise<void> {
  const { connection, readiness, signal } = props;
  let lastError = '';
  const onError = (error: Error) => {
    lastError = error.message;
  };
  connection.on('error', onError);
  try {
    readiness.trying('redis');
    // One PING, queued until the connection is up: nothing piles up however long the outage lasts.
    const answered = connection.ping();
    answered.catch(() => undefined);
    const stopped = new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
    while (!(await settlesWithin(Promise.race([answered, stopped]), REDIS_ATTEMPT_MS))) {
      const where = `cannot reach Redis at ${redactedUrl(props.url)}`;
      readiness.missing(
        'redis',
        new RedisUnavailableError(lastError ? `${where}: ${lastError}` : where),
        REDIS_ATTEMPT_MS,
      );
    }
    if (signal.aborted) throw new WorkerStartStoppedError();
    await answered;
    readiness.answered('redis');
  } finally {
    connection.off('error', onError);
  }
}

export interface UntilOpenedProps<T> {
  dependency: WorkerDependency;
  open(): Promise<T>;
  /** Closes what opened after the start was stopped. */
  close(opened: T): Promise<unknown>;
  readiness: WorkerReadiness;
  signal: AbortSignal;
  delayMs?: (attempt: number) => number;
}

/**
 * Opens a dependency, again after each outage (`isStartOutage`) with backoff, until it opens; any
 * other error rejects at once. An attempt under way when `signal` aborts is finished, then closed.
 */
export async function untilOpened<T>(props: UntilOpenedProps<T>): Promise<T> {
  const { dependency, readiness, signal } = props;
  const delayMs = props.delayMs ?? startRetryDelayMs;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw new WorkerStartStoppedError();
    readiness.trying(dependency);
    let opened: T;
    try {
      opened = await props.open();
    } catch (error) {
      if (signal.aborted) throw new WorkerStartStoppedError();
      if (!isStartOutage(error)) throw error;
      const wait = delayMs(attempt);
      readiness.missing(dependency, error, wait);
      await sleep(wait, undefined, { signal }).catch(() => undefined);
      continue;
    }
    if (signal.aborted) {
      await props.close(opened).catch(() => undefined);
      throw new WorkerStartStoppedError();
    }
    readiness.answered(dependency);
    return opened;
  }
}
