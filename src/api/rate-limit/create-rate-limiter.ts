import type { Redis } from 'ioredis';
import { type Clock, systemClock } from '../../domain/clock.js';
import type { LimiterOptions } from './policy.js';
import { RedisRateLimiter, type RedisRateLimiterProps } from './redis-limiter.js';
import { timerSleep } from './sleep.js';
import { SlidingLogRateLimiter } from './sliding-log.js';
import type { MeteredRateLimiter, Sleep } from './types.js';

export interface CreateRateLimiterOptions extends LimiterOptions {
  /** With a connection: one budget shared by every process (Redis). Without: in this process only. */
  redis?: Redis | undefined;
  /** Redis key prefix (ignored in memory). Default `receivables-sync`. */
  prefix?: string | undefined;
  clock?: Clock | undefined;
  sleep?: Sleep | undefined;
  /** Redis only; see `RedisRateLimiterProps.timeSource` (default Redis `TIME`). */
  timeSource?: RedisRateLimiterProps['timeSource'];
  /** Redis only; see `RedisRateLimiterProps.paceSlices`. */
  paceSlices?: number | undefined;
}

/**
 * The rate limiter of the API client: shared through Redis when a connection is given, in memory
 * otherwise. Both admit a request only when fewer than `q` were admitted in the last `w + margin`,
 * and order the waiters of a key by weighted fair queuing between their flows (`withFlow`).
 * Concurrency is not its business: the client bounds requests in flight with a p-queue per flow and
 * calls `acquire` inside each slot (see docs/rate-limiting.md).
 *
 * @example
 * const limiter = createRateLimiter({ redis, prefix: 'receivables-sync', logger });
 * const queue = new PQueue({ concurrency: 8 });
 * await queue.add(async () => {
 *   await limiter.acquire(budgetKey, signal);
 *   const started = Date.now();
 *   const response = await fetch(url, { headers, signal });
 *   await limiter.observe(budgetKey, { ...parseRateInfo(response.status, response.headers), elapsedMs: Date.now() - started });
 * });
 */
export function createRateLimiter(options: CreateRateLimiterOptions = {}): MeteredRateLimiter {
  const clock = options.clock ?? systemClock;
  const sleep = options.sleep ?? timerSleep;
  const common: LimiterOptions = {
    defaultPolicy: options.defaultPolicy,
    marginMs: options.marginMs,
    policyName: options.policyName,
    logger: options.logger,
  };
  if (options.redis) {
    return new RedisRateLimiter({
      ...common,
      redis: options.redis,
      prefix: options.prefix ?? 'receivables-sync',
      clock,
      sleep,
      timeSource: options.timeSource,
      paceSlices: options.paceSlices,
    });
  }
  return new SlidingLogRateLimiter({ ...common, clock, sleep });
}
