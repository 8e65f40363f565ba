import type { Logger } from 'pino';
import { settlesWithin } from '../domain/settle.js';

/** Each part of the daemon, closed in reverse order of start; resolving `false` stops the closing there. */
export interface Closer {
  name: string;
  close(): Promise<unknown>;
}

/** How long a part other than the worker may take to close before it is left behind. */
export const CLOSE_LIMIT_MS = 5000;
/**
 * On SIGTERM, the BullMQ worker waits `queue.shutdownSeconds` for its running jobs, then this long
 * at most to close its connections: the longest the shutdown waits for the passes (a supervisor's
 * grace period must be longer: `stop_grace_period` in docker-compose.yml).
 */
export const WORKER_CLOSE_MARGIN_MS = 10_000;

/**
 * Closes the parts in reverse order of start, each within its limit (the BullMQ worker: its
 * shutdown limit and `WORKER_CLOSE_MARGIN_MS`; the others `CLOSE_LIMIT_MS`): one that does not
 * finish in time is left behind. A part resolving `false` (jobs left at the limit) stops the closing there.
 */
export async function closeInReverse(
  closers: readonly Closer[],
  workerLimitMs: number,
  logger: Logger,
): Promise<{ jobsLeft: boolean }> {
  for (const closer of [...closers].reverse()) {
    // The worker bounds its own wait (running jobs); the margin covers closing its connections.
    const limit = closer.name === 'worker' ? workerLimitMs + WORKER_CLOSE_MARGIN_MS : CLOSE_LIMIT_MS;
    let result: unknown;
    const done = await settlesWithin(
      closer.close().then(
        (value) => {
          result = value;
        },
        (error: Error) => logger.warn({ part: closer.name, err: error.message }, 'close failed'),
      ),
      limit,
    );
    if (!done)
      logger.warn({ part: closer.name, limitMs: limit }, 'close did not finish in time: left behind');
    if (result === false) return { jobsLeft: true };
    logger.debug({ part: closer.name }, 'closed');
  }
  return { jobsLeft: false };
}
