/**
 * The token bucket (GCRA) the sliding log is measured against by `npm run bench:limiter`: the same
 * budget keys, pause and slow start as `RedisRateLimiter` (its Lua pieces), but a rate instead of a
 * log, and first-come in each process (`WaiterLine`) instead of fair queuing between flows. Only
 * the bench uses it (docs/rate-limiting.md, "Why a sliding log, not a token bucket").
 */
import type { Redis } from 'ioredis';
import {
  type LimiterOptions,
  type MarginRule,
  marginRule,
  PROBE_POLICY,
  reactionTo,
  SLOW_START_PROBE_MS,
  UNKNOWN_POLICY_POLL_MS,
} from '../src/api/rate-limit/policy.js';
import { budgetKeys } from '../src/api/rate-limit/redis-keys.js';
import {
  OBSERVE_HEADERS,
  PAUSE_AND_SLOW_START,
  PRELUDE,
  PROBE_SENT,
} from '../src/api/rate-limit/redis-scripts.js';
import { limiterClosed } from '../src/api/rate-limit/sliding-log.js';
import { LimiterStoreError, storeUnavailable } from '../src/api/rate-limit/store-failure.js';
import {
  emptyLimiterStats,
  type MeteredRateLimiter,
  type RateInfo,
  type RateLimiterStats,
  type Sleep,
} from '../src/api/rate-limit/types.js';
import { WaitBoard } from '../src/api/rate-limit/wait-board.js';
import type { Clock } from '../src/domain/clock.js';
import { WaiterLine } from './limiter-waiter-line.js';

/**
 * GCRA acquire: burst C = ARGV[6], rate (q - C) / (w + margin), so that C + rate * (w + margin) <= q.
 * KEYS[1] the theoretical arrival time (string, ms), KEYS[2] and KEYS[3] the pause and the policy
 * (redis-keys.ts); the shared ARGV head (redis-scripts.ts), ARGV[7] unused, ARGV[8] the slow
 * start's wait for an answer (ms). Returns {0, known} when admitted, else {ms to wait, known}.
 */
const TOKEN_BUCKET_ACQUIRE = `${PRELUDE}
local function waitFor(ms, k) return {ms, k} end
${PAUSE_AND_SLOW_START}
local burst = math.min(tonumber(ARGV[6]), q)
local interval = span / math.max(1, q - burst)
if burst >= q then interval = span end
local tolerance = (burst - 1) * interval
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if tat - tolerance <= now then
  local nextTat = tat + interval
  redis.call('SET', KEYS[1], tostring(nextTat), 'PX', math.ceil(nextTat - now) + 1000)
  ${PROBE_SENT}
  return {0, known}
end
return {math.max(1, math.ceil(tat - tolerance - now)), known}
`;

/** Observe: the policy, the pause and the end of the slow start; no log, so no restamp nor other clients. */
const TOKEN_BUCKET_OBSERVE = `${PRELUDE}
${OBSERVE_HEADERS}
return paused
`;

interface ScriptCommands {
  receivablesBenchBucketAcquire(...args: (string | number)[]): Promise<[number, number]>;
  receivablesBenchBucketObserve(...args: (string | number)[]): Promise<number>;
}

export interface TokenBucketRateLimiterProps extends LimiterOptions {
  redis: Redis;
  prefix: string;
  clock: Clock;
  sleep: Sleep;
  /** The bucket's burst C (default 1). */
  burst?: number | undefined;
  /** As `RedisRateLimiterProps.timeSource`: Redis `TIME` (default), or `clock` for tests. */
  timeSource?: 'redis' | 'clock' | undefined;
}

/**
 * @example
 * const limiter = new TokenBucketRateLimiter({ redis, prefix: 'bench', clock: systemClock, sleep: timerSleep });
 * await limiter.acquire(key, signal);
 */
export class TokenBucketRateLimiter implements MeteredRateLimiter {
  readonly #props: TokenBucketRateLimiterProps;
  readonly #redis: ScriptCommands;
  readonly #margin: MarginRule;
  readonly #closing = new AbortController();
  readonly #stats: RateLimiterStats = emptyLimiterStats();
  /** The first caller of a key checks, the others wait their turn. A dead Redis fails them all at once. */
  readonly #line = new WaiterLine((error) => error instanceof LimiterStoreError);
  readonly #waits = new WaitBoard(
    () => this.#props.clock.now().getTime(),
    () => this.#line.totalQueued,
  );

  constructor(props: TokenBucketRateLimiterProps) {
    this.#props = props;
    this.#margin = marginRule(props);
    props.redis.defineCommand('receivablesBenchBucketAcquire', {
      numberOfKeys: 3,
      lua: TOKEN_BUCKET_ACQUIRE,
    });
    props.redis.defineCommand('receivablesBenchBucketObserve', {
      numberOfKeys: 3,
      lua: TOKEN_BUCKET_OBSERVE,
    });
    this.#redis = props.redis as unknown as ScriptCommands;
  }

  async acquire(key: string, signal?: AbortSignal): Promise<number> {
    const started = this.#props.clock.now().getTime();
    const wake = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    try {
      await this.#line.turn(key, () => this.#admitFirstCome(key, wake), wake);
    } catch (error) {
      if (this.#closing.signal.aborted) throw limiterClosed();
      throw error;
    }
    const waited = this.#props.clock.now().getTime() - started;
    this.#stats.acquired++;
    this.#stats.waitedMsTotal += waited;
    return waited;
  }

  /** Any answer ends the slow start's wait; one of another policy does nothing else. */
  async observe(key: string, info: RateInfo): Promise<void> {
    const reaction = reactionTo(info, this.#props.policyName) ?? { rateLimited: false };
    if (reaction.rateLimited) this.#stats.rateLimited++;
    if (reaction.policy) this.#stats.policy = reaction.policy;
    this.#stats.observeCalls = (this.#stats.observeCalls ?? 0) + 1;
    const keys = budgetKeys(this.#props.prefix, key);
    const paused = await this.#redis
      .receivablesBenchBucketObserve(
        this.#tatKey(key),
        keys.pause,
        keys.policy,
        ...this.#headArgs(),
        reaction.policy?.quota ?? '',
        reaction.policy?.windowSeconds ?? '',
        reaction.pauseMs ?? '',
        reaction.remaining?.remaining ?? '',
      )
      .catch(storeUnavailable);
    if (paused > 0) this.#stats.pauses++;
  }

  stats(): RateLimiterStats {
    return { ...this.#stats, ...this.#waits.report() };
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** The first waiter's loop: check, sleep until the time Redis names, check again. */
  async #admitFirstCome(key: string, wake: AbortSignal): Promise<void> {
    for (;;) {
      wake.throwIfAborted();
      this.#stats.checks = (this.#stats.checks ?? 0) + 1;
      const keys = budgetKeys(this.#props.prefix, key);
      const [waitMs, known] = await this.#redis
        .receivablesBenchBucketAcquire(
          this.#tatKey(key),
          keys.pause,
          keys.policy,
          ...this.#headArgs(),
          this.#props.burst ?? 1,
          '',
          this.#props.defaultPolicy === undefined ? SLOW_START_PROBE_MS : 0,
        )
        .catch(storeUnavailable);
      if (waitMs <= 0) return;
      const sleepMs = known === 1 ? waitMs : Math.min(waitMs, UNKNOWN_POLICY_POLL_MS);
      const wakesAt = this.#props.clock.now().getTime() + sleepMs;
      await this.#waits.during(wakesAt, this.#props.sleep(sleepMs, wake));
    }
  }

  /** The theoretical arrival time of budget `key`, beside the budget's other keys. */
  #tatKey(key: string): string {
    return `${this.#props.prefix}:rl:${key}:tat`;
  }

  /** The scripts' shared ARGV head: the default policy, the margin, and now ('': Redis `TIME`). */
  #headArgs(): [number, number, number, number, number | ''] {
    const policy = this.#props.defaultPolicy ?? PROBE_POLICY;
    const now = this.#props.timeSource === 'clock' ? this.#props.clock.now().getTime() : '';
    return [policy.quota, policy.windowSeconds, this.#margin.minMs, this.#margin.ratio, now];
  }
}
