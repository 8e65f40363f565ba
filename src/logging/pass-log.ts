import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from 'pino';

/** A line about rate-limit waits at most this often per pass (the pass's end line sums them all). */
const WAIT_LINE_EVERY_MS = 10_000;
/** Waits shorter than this are only summed (a busy budget makes most requests wait a little). */
const WAIT_WORTH_A_LINE_MS = 1_000;

/**
 * The log of the pass under way, reachable from code that has no logger of the pass (the API
 * client's retries and rate-limit waits): its lines carry the pass's `runId`, so they reach the
 * run's log on the dashboard (`RunLogSink`), not only the process's log.
 */
export class PassLog {
  #waits = 0;
  #waitedMs = 0;
  #lineAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** A request of the pass waited `ms` for the rate limiter: summed, and said now and then. */
  rateLimitWait(ms: number): void {
    if (ms <= 0) return;
    this.#waits++;
    this.#waitedMs += ms;
    const at = this.now();
    if (ms < WAIT_WORTH_A_LINE_MS || at - this.#lineAt < WAIT_LINE_EVERY_MS) return;
    this.#lineAt = at;
    this.logger.info(
      {
        event: 'rate-limit.wait',
        waitedMs: Math.round(ms),
        requestsWaited: this.#waits,
        totalWaitedMs: Math.round(this.#waitedMs),
      },
      'waited for the API rate limit',
    );
  }

  /** The waits so far: how many requests waited, and how long in all. */
  get rateLimitWaits(): { requests: number; waitedMs: number } {
    return { requests: this.#waits, waitedMs: Math.round(this.#waitedMs) };
  }
}

const current = new AsyncLocalStorage<PassLog>();

/** Runs `fn` (a pass) with `log` as the pass log of everything it calls. */
export function withPassLog<T>(log: PassLog, fn: () => Promise<T>): Promise<T> {
  return current.run(log, fn);
}

/** The log of the pass the caller runs in, if any. */
export function currentPassLog(): PassLog | undefined {
  return current.getStore();
}
