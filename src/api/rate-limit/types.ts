import type { Flow } from './flow.js';

/** What the server said about the rate limit on one response (all fields optional). */
export interface RateInfo {
  status: number;
  /** From `RateLimit-Policy: "public-api";q=300;w=60`. */
  policy?: { name: string; quota: number; windowSeconds: number };
  /** From `RateLimit: "public-api";r=12;t=30`. */
  remaining?: number;
  resetSeconds?: number;
  /** From `Retry-After` on a 429 or an idempotency 409 (seconds). */
  retryAfterSeconds?: number;
  /**
   * Optional: milliseconds from sending the request to reading its response headers. The
   * `RateLimit: r=...` count was taken when the request arrived, so the limiter compares it with its
   * own log as it was `elapsedMs` ago; without it a slow response can be read as another client's
   * usage, which only costs throughput, never safety.
   */
  elapsedMs?: number;
}

/**
 * One request budget per key (a hash of the access token grant), shared by every process using it
 * when backed by Redis. Callers `acquire` before each request and `observe` every response.
 */
export interface RateLimiter {
  /**
   * Resolves when one request may be sent under `key`'s budget; the value is the ms waited. The
   * waiters of one key are admitted by weighted fair queuing between their flows (`flow`, else the
   * current `withFlow`, else the implicit flow `''` of weight 1); see rate-limit/flow.ts.
   */
  acquire(key: string, signal?: AbortSignal, flow?: Flow): Promise<number>;
  /** Feeds the server's headers: resizes to RateLimit-Policy, follows RateLimit, pauses on Retry-After. */
  observe(key: string, info: RateInfo): Promise<void>;
  close(): Promise<void>;
}

/** A server policy: at most `quota` requests in any sliding window of `windowSeconds`. */
export interface RateLimitPolicy {
  quota: number;
  windowSeconds: number;
}

/** Counters of one process's limiter, for metrics (monotonic since creation). */
export interface RateLimiterStats {
  /** Requests admitted by `acquire`. */
  acquired: number;
  /** Total milliseconds callers spent waiting in `acquire`. */
  waitedMsTotal: number;
  /** 429 responses observed (each pauses every process of that key for its Retry-After). */
  rateLimited: number;
  /** Pauses this process set from a Retry-After (429 or 409) or from `RateLimit: r=0`. */
  pauses: number;
  /** Requests of other clients, inferred from `RateLimit: r=...`, added to the log as phantoms. */
  foreignRequests: number;
  /**
   * (Not a counter: now.) The `acquire` calls sleeping for the budget, and when the first of them
   * wakes (epoch ms, the limiter's clock); absent when none waits.
   */
  waiting?: { calls: number; resumesAt: number } | undefined;
  /**
   * Wall-clock milliseconds during which at least one request of this process waited for
   * the budget: the time the rate limit held the process up (`waitedMsTotal` adds every caller's).
   */
  heldMs?: number | undefined;
  /**
   * Budget checks `acquire` made (Redis: one Lua call each). In memory one loop per key
   * checks for all its waiters; in Redis each waiter checks when it arrives and at its slot's edge,
   * so it stays near one or two per admitted request however many wait.
   */
  checks?: number | undefined;
  /** Redis only: Lua calls of `observe` (one per observed response). */
  observeCalls?: number | undefined;
  /** Log entries restamped with the time their response was observed. */
  restamped?: number | undefined;
  /** The policy a server told last (`RateLimit-Policy`); absent until one did. */
  policy?: RateLimitPolicy | undefined;
}

/** Counters of a limiter that has done nothing yet. */
export const emptyLimiterStats = (): RateLimiterStats => ({
  acquired: 0,
  waitedMsTotal: 0,
  rateLimited: 0,
  pauses: 0,
  foreignRequests: 0,
  checks: 0,
  restamped: 0,
});

/** A `RateLimiter` that also reports its counters. */
export interface MeteredRateLimiter extends RateLimiter {
  stats(): RateLimiterStats;
}

/** Waits `ms` milliseconds, rejecting with `signal.reason` if the signal aborts first. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;
