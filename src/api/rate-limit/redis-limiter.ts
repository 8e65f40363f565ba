import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../domain/clock.js';
import { AppError, messageOf } from '../../domain/errors.js';
import type { Logger } from '../../logging/logger.js';
import {
  type LimiterOptions,
  LOOKBACK_MAX_MS,
  type MarginRule,
  marginRule,
  PROBE_POLICY,
  type Reaction,
  reactionTo,
  UNKNOWN_POLICY_POLL_MS,
} from './policy.js';
import { OBSERVE, SLIDING_LOG_ACQUIRE, TOKEN_BUCKET_ACQUIRE } from './redis-scripts.js';
import { limiterClosed } from './sliding-log.js';
import {
  emptyLimiterStats,
  type MeteredRateLimiter,
  type RateInfo,
  type RateLimiterStats,
  type RateLimitPolicy,
  type Sleep,
} from './types.js';
import { WaitBoard } from './wait-board.js';

export type LimiterAlgorithm = 'sliding-log' | 'token-bucket';

/**
 * The shared limiter's Redis did not answer (ioredis gave up on the command): no request may go out
 * unmetered, so the caller's pass stops on an infrastructure fault and the next one resumes.
 */
export class LimiterStoreError extends AppError {
  constructor(cause: unknown) {
    super('REDIS_UNAVAILABLE', `the rate limiter's Redis did not answer: ${messageOf(cause)}`, {
      kind: 'infrastructure',
      retryable: true,
      cause,
    });
  }
}

const storeUnavailable = (error: unknown): never => {
  throw error instanceof AppError ? error : new LimiterStoreError(error);
};

export interface RedisRateLimiterProps extends LimiterOptions {
  /** A connection the caller owns (`close()` does not quit it). */
  redis: Redis;
  /** Key prefix, e.g. `receivables-sync`; keys are `${prefix}:rl:${key}:log|pause|policy`. */
  prefix: string;
  /** Measures the time waited (admission itself uses the Redis clock). */
  clock: Clock;
  sleep: Sleep;
  /**
   * `sliding-log` (default): exact, the larger share of the quota. `token-bucket`: GCRA with burst
   * `tokenBucketBurst` (default 1), kept to measure the two (`npm run bench:limiter`).
   */
  algorithm?: LimiterAlgorithm | undefined;
  tokenBucketBurst?: number | undefined;
}

interface ScriptCommands {
  receivablesRateLogAcquire(...args: (string | number)[]): Promise<[number, number]>;
  receivablesRateBucketAcquire(...args: (string | number)[]): Promise<[number, number]>;
  receivablesRateObserve(...args: (string | number)[]): Promise<[number, number]>;
}

/**
 * The budget shared by every process using one token grant: one atomic Lua script per `acquire`
 * (prune, count, add) and per `observe` (policy, pause, other clients' usage), on the Redis clock.
 * A process that gets a 429 sets the pause every other process reads on its next `acquire`.
 *
 * @example
 * const limiter = new RedisRateLimiter({ redis, prefix: 'receivables-sync', clock: systemClock, sleep: timerSleep });
 * const waitedMs = await limiter.acquire(tokens.budgetKey(token), signal);
 */
export class RedisRateLimiter implements MeteredRateLimiter {
  readonly #props: RedisRateLimiterProps;
  readonly #redis: ScriptCommands;
  readonly #margin: MarginRule;
  readonly #closing = new AbortController();
  readonly #member = randomUUID().slice(0, 8);
  #sequence = 0;
  /** The policy last told per key in this process, to log changes once. */
  readonly #policies = new Map<string, string>();
  readonly #log: Logger | undefined;
  readonly #stats: RateLimiterStats = emptyLimiterStats();
  readonly #waits = new WaitBoard(() => this.#props.clock.now().getTime());
  #told: RateLimitPolicy | undefined;

  constructor(props: RedisRateLimiterProps) {
    this.#props = props;
    this.#margin = marginRule(props);
    this.#log = props.logger?.child({ component: 'rate-limiter', store: 'redis' });
    props.redis.defineCommand('receivablesRateLogAcquire', { numberOfKeys: 3, lua: SLIDING_LOG_ACQUIRE });
    props.redis.defineCommand('receivablesRateBucketAcquire', { numberOfKeys: 3, lua: TOKEN_BUCKET_ACQUIRE });
    props.redis.defineCommand('receivablesRateObserve', { numberOfKeys: 3, lua: OBSERVE });
    this.#redis = props.redis as unknown as ScriptCommands;
  }

  get algorithm(): LimiterAlgorithm {
    return this.#props.algorithm ?? 'sliding-log';
  }

  async acquire(key: string, signal?: AbortSignal): Promise<number> {
    const started = this.#props.clock.now().getTime();
    const wake = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    for (;;) {
      if (this.#closing.signal.aborted) throw limiterClosed();
      signal?.throwIfAborted();
      const [waitMs, known] = await this.#tryTake(key).catch(storeUnavailable);
      if (waitMs <= 0) break;
      const sleepMs = known === 1 ? waitMs : Math.min(waitMs, UNKNOWN_POLICY_POLL_MS);
      try {
        const wakesAt = this.#props.clock.now().getTime() + sleepMs;
        await this.#waits.during(wakesAt, this.#props.sleep(sleepMs, wake));
      } catch (error) {
        if (this.#closing.signal.aborted) throw limiterClosed();
        throw error;
      }
    }
    const waited = this.#props.clock.now().getTime() - started;
    this.#stats.acquired++;
    this.#stats.waitedMsTotal += waited;
    return waited;
  }

  async observe(key: string, info: RateInfo): Promise<void> {
    const reaction = reactionTo(info, this.#props.policyName);
    if (reaction) await this.#apply(key, reaction);
  }

  stats(): RateLimiterStats {
    return { ...this.#stats, ...this.#waits.report(), ...(this.#told ? { policy: this.#told } : {}) };
  }

  /** Wakes and rejects pending `acquire`s; the Redis connection stays open (the caller owns it). */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** The Redis keys of one budget (tests clean them up; operators can inspect them). */
  keysOf(key: string): { log: string; tat: string; pause: string; policy: string } {
    const base = `${this.#props.prefix}:rl:${key}`;
    return { log: `${base}:log`, tat: `${base}:tat`, pause: `${base}:pause`, policy: `${base}:policy` };
  }

  #tryTake(key: string): Promise<[number, number]> {
    const keys = this.keysOf(key);
    if (this.algorithm === 'token-bucket') {
      return this.#redis.receivablesRateBucketAcquire(
        keys.tat,
        keys.pause,
        keys.policy,
        ...this.#policyArgs(),
        this.#props.tokenBucketBurst ?? 1,
      );
    }
    return this.#redis.receivablesRateLogAcquire(
      keys.log,
      keys.pause,
      keys.policy,
      ...this.#policyArgs(),
      this.#nextMember(),
      LOOKBACK_MAX_MS,
    );
  }

  async #apply(key: string, reaction: Reaction): Promise<void> {
    if (reaction.rateLimited) this.#stats.rateLimited++;
    if (reaction.policy) this.#told = reaction.policy;
    const told = reaction.policy && `${reaction.policy.quota}/${reaction.policy.windowSeconds}s`;
    if (told && this.#policies.get(key) !== told) {
      this.#policies.set(key, told);
      this.#log?.info({ key, policy: reaction.policy }, 'rate-limit policy set');
    }
    const keys = this.keysOf(key);
    const seen = reaction.remaining;
    const [foreign, pausedMs] = await this.#redis
      .receivablesRateObserve(
        this.algorithm === 'token-bucket' ? keys.tat : keys.log,
        keys.pause,
        keys.policy,
        ...this.#policyArgs(),
        reaction.policy?.quota ?? '',
        reaction.policy?.windowSeconds ?? '',
        reaction.pauseMs ?? '',
        seen?.remaining ?? '',
        seen?.resetSeconds ?? 0,
        seen?.lookbackMs ?? 0,
        LOOKBACK_MAX_MS,
        this.#nextMember(),
        this.algorithm === 'sliding-log' ? '1' : '0',
      )
      .catch(storeUnavailable);
    if (foreign > 0) {
      this.#stats.foreignRequests += foreign;
      this.#log?.debug({ key, foreign, remaining: seen?.remaining }, 'other clients use this budget');
    }
    if (pausedMs > 0) {
      this.#stats.pauses++;
      const reason = reaction.pauseMs !== undefined ? 'retry-after' : 'budget used by other clients';
      this.#log?.warn({ key, pauseMs: pausedMs, reason }, 'rate limiter paused every process of this key');
    }
  }

  #policyArgs(): [number, number, number, number] {
    const policy = this.#props.defaultPolicy ?? PROBE_POLICY;
    return [policy.quota, policy.windowSeconds, this.#margin.minMs, this.#margin.ratio];
  }

  #nextMember(): string {
    this.#sequence = (this.#sequence + 1) % Number.MAX_SAFE_INTEGER;
    return `${this.#member}:${this.#sequence}`;
  }
}
