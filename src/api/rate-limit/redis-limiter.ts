import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { type Flow, flowOrCurrent } from './flow.js';
import { InFlight } from './in-flight.js';
import {
  CHECK_SLACK_MS,
  type LimiterOptions,
  LOOKBACK_MAX_MS,
  type MarginRule,
  marginRule,
  PACE_SLICES,
  PROBE_POLICY,
  type Reaction,
  reactionTo,
  SLOW_START_PROBE_MS,
  spanMs,
  TICKET_GRACE_MS,
  UNKNOWN_POLICY_POLL_MS,
} from './policy.js';
import { type BudgetKeys, budgetKeys } from './redis-keys.js';
import { OBSERVE, SLIDING_LOG_ACQUIRE } from './redis-scripts.js';
import { limiterClosed } from './sliding-log.js';
import { LimiterStoreError, SharedFailure, storeUnavailable, unlessAborted } from './store-failure.js';
import {
  emptyLimiterStats,
  type MeteredRateLimiter,
  type RateInfo,
  type RateLimiterStats,
  type RateLimitPolicy,
  type Sleep,
} from './types.js';
import { WaitBoard } from './wait-board.js';

export { LimiterStoreError } from './store-failure.js';

export interface RedisRateLimiterProps extends LimiterOptions {
  /** A connection the caller owns (`close()` does not quit it). */
  redis: Redis;
  /** Key prefix, e.g. `receivables-sync`; keys are `${prefix}:rl:${key}:log|pause|policy|fq...` (redis-keys.ts). */
  prefix: string;
  /** Measures the time waited; with `timeSource: 'clock'`, also the time the scripts admit by. */
  clock: Clock;
  /** Every wait for the budget: a pause, the slow start's poll, a slot's edge. */
  sleep: Sleep;
  /**
   * Where the scripts read "now". `redis` (default): Redis `TIME`, one clock for every process
   * whatever their own clocks say (production). `clock`: `clock.now()`, passed to each script, so
   * a test that moves `clock` and `sleep` together (test/support/virtual-time.ts) runs windows,
   * pauses and pacing in milliseconds; only for processes that share that clock.
   */
  timeSource?: 'redis' | 'clock' | undefined;
  /** Slices of a saturated budget's pacing (default `PACE_SLICES`; 0 or 1: no pacing). */
  paceSlices?: number | undefined;
}

interface ScriptCommands {
  receivablesRateLogAcquire(...args: (string | number)[]): Promise<[number, number, string]>;
  receivablesRateObserve(...args: (string | number)[]): Promise<[number, number, number]>;
}

/**
 * The budget shared by every process using one token grant: one atomic Lua script per budget check
 * (prune, count, add) and per `observe` (restamp, policy, pause, other clients' usage), on the Redis
 * clock (a test's clock with `timeSource: 'clock'`). The waiters of a key, in every process, hold
 * tickets in Redis ordered by their flows' virtual finish tags (weighted fair queuing): a ticket
 * takes a slot only when its rank is below the free slots, else Redis names the edge of its slot and
 * the waiter sleeps until then, so a request costs about two checks (its arrival and its edge). A
 * process that gets a 429 sets the pause every other process reads on its next `acquire`.
 *
 * @example
 * const limiter = new RedisRateLimiter({ redis, prefix: 'receivables-sync', clock: systemClock, sleep: timerSleep });
 * const waitedMs = await limiter.acquire(tokens.budgetKey(token), signal, { id: 'erp-csv', weight: 1 });
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
  /** A dead Redis met by one waiter fails every waiter of the process at once. */
  readonly #storeDown = new SharedFailure();
  /** Log members of this process's admissions not answered yet, per key, oldest first. */
  readonly #inFlight = new InFlight<string>();
  readonly #waits = new WaitBoard(() => this.#props.clock.now().getTime());
  #told: RateLimitPolicy | undefined;

  constructor(props: RedisRateLimiterProps) {
    this.#props = props;
    this.#margin = marginRule(props);
    this.#log = props.logger?.child({ component: 'rate-limiter', store: 'redis' });
    props.redis.defineCommand('receivablesRateLogAcquire', { numberOfKeys: 7, lua: SLIDING_LOG_ACQUIRE });
    props.redis.defineCommand('receivablesRateObserve', { numberOfKeys: 3, lua: OBSERVE });
    this.#redis = props.redis as unknown as ScriptCommands;
  }

  /** `flow` defaults to the current `withFlow`, else the implicit flow. */
  async acquire(key: string, signal?: AbortSignal, flow?: Flow): Promise<number> {
    const started = this.#props.clock.now().getTime();
    const wake = signal ? AbortSignal.any([signal, this.#closing.signal]) : this.#closing.signal;
    try {
      await this.#admitFair(key, flowOrCurrent(flow), wake);
    } catch (error) {
      if (this.#closing.signal.aborted) throw limiterClosed();
      throw error;
    }
    const waited = this.#props.clock.now().getTime() - started;
    this.#stats.acquired++;
    this.#stats.waitedMsTotal += waited;
    return waited;
  }

  /**
   * One Lua call: restamps this process's oldest unanswered admission of `key` with the Redis time
   * (the server counted that request before answering), ends a slow-start wait, follows the headers.
   */
  async observe(key: string, info: RateInfo): Promise<void> {
    const reaction = reactionTo(info, this.#props.policyName);
    await this.#apply(key, reaction ?? { rateLimited: false }, reaction !== undefined);
  }

  stats(): RateLimiterStats {
    return { ...this.#stats, ...this.#waits.report(), ...(this.#told ? { policy: this.#told } : {}) };
  }

  /** Wakes and rejects pending `acquire`s; the Redis connection stays open (the caller owns it). */
  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** The Redis keys of one budget (tests clean them up; operators can inspect them). */
  keysOf(key: string): BudgetKeys {
    return budgetKeys(this.#props.prefix, key);
  }

  /**
   * Sliding log: this waiter's ticket, checked until admitted. Redis ranks it among every process's
   * waiters by tag and names the edge of its slot; the waiter sleeps until then (abortable) and
   * checks again: an edge is only a hint, the check decides.
   */
  async #admitFair(key: string, flow: Flow, wake: AbortSignal): Promise<void> {
    const ticket = `${flow.id}|${this.#nextMember()}`;
    const until = AbortSignal.any([wake, this.#storeDown.signal]);
    let tag = '';
    try {
      for (;;) {
        until.throwIfAborted();
        const check = this.#checkTicket(key, ticket, flow, tag).catch((error) =>
          this.#storeDown.rethrow(error),
        );
        const [waitMs, known, issued] = await unlessAborted(check, until);
        if (waitMs <= 0) {
          this.#inFlight.add(key, ticket, this.#props.clock.now().getTime());
          return;
        }
        tag = issued;
        const sleepMs = known === 1 ? waitMs : Math.min(waitMs, UNKNOWN_POLICY_POLL_MS);
        const wakesAt = this.#props.clock.now().getTime() + sleepMs;
        await this.#waits.during(wakesAt, this.#props.sleep(sleepMs, until));
      }
    } catch (error) {
      // Give the place back (best effort: a ticket nobody checks lapses TICKET_GRACE_MS after its edge).
      if (!(error instanceof LimiterStoreError)) {
        const keys = this.keysOf(key);
        this.#props.redis
          .pipeline()
          .zrem(keys.fq, ticket)
          .zrem(keys.fqDue, ticket)
          .exec()
          .catch(() => undefined);
      }
      throw error;
    }
  }

  #checkTicket(key: string, ticket: string, flow: Flow, tag: string): Promise<[number, number, string]> {
    this.#stats.checks = (this.#stats.checks ?? 0) + 1;
    const keys = this.keysOf(key);
    return this.#redis.receivablesRateLogAcquire(
      keys.log,
      keys.pause,
      keys.policy,
      keys.fq,
      keys.fqDue,
      keys.fqTags,
      keys.pace,
      ...this.#headArgs(),
      ticket,
      LOOKBACK_MAX_MS,
      this.#probeMs,
      flow.id,
      flow.weight,
      tag,
      TICKET_GRACE_MS,
      CHECK_SLACK_MS,
      this.#props.paceSlices ?? PACE_SLICES,
    );
  }

  /** `follow`: false for a response of another policy (only the restamp and the slow start apply). */
  async #apply(key: string, reaction: Reaction, follow: boolean): Promise<void> {
    if (reaction.rateLimited) this.#stats.rateLimited++;
    if (reaction.policy) this.#told = reaction.policy;
    const told = reaction.policy && `${reaction.policy.quota}/${reaction.policy.windowSeconds}s`;
    if (told && this.#policies.get(key) !== told) {
      this.#policies.set(key, told);
      this.#log?.info({ key, policy: reaction.policy }, 'rate-limit policy set');
    }
    const keys = this.keysOf(key);
    const seen = follow ? reaction.remaining : undefined;
    this.#stats.observeCalls = (this.#stats.observeCalls ?? 0) + 1;
    const [foreign, pausedMs, restamped] = await this.#redis
      .receivablesRateObserve(
        keys.log,
        keys.pause,
        keys.policy,
        ...this.#headArgs(),
        reaction.policy?.quota ?? '',
        reaction.policy?.windowSeconds ?? '',
        reaction.pauseMs ?? '',
        seen?.remaining ?? '',
        seen?.resetSeconds ?? 0,
        seen?.lookbackMs ?? 0,
        LOOKBACK_MAX_MS,
        this.#nextMember(),
        this.#inFlight.oldest(key, this.#keptSince(reaction)) ?? '',
      )
      .catch(storeUnavailable);
    if (restamped === 1) this.#stats.restamped = (this.#stats.restamped ?? 0) + 1;
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

  /**
   * Admissions before this time (ms, local clock) are not restamped: Redis keeps the log for
   * w + m + 30 s; half of the 30 s leaves room for the clocks' drift and a policy change.
   */
  #keptSince(reaction: Reaction): number {
    const policy = reaction.policy ?? this.#told ?? this.#props.defaultPolicy ?? PROBE_POLICY;
    return this.#props.clock.now().getTime() - spanMs(policy, this.#margin) - LOOKBACK_MAX_MS / 2;
  }

  /** The slow start's wait for an answer; 0 (none) when a default policy is configured. */
  get #probeMs(): number {
    return this.#props.defaultPolicy === undefined ? SLOW_START_PROBE_MS : 0;
  }

  /** The scripts' shared ARGV head: the default policy, the margin, and now ('': Redis `TIME`). */
  #headArgs(): [number, number, number, number, number | ''] {
    const policy = this.#props.defaultPolicy ?? PROBE_POLICY;
    const now = this.#props.timeSource === 'clock' ? this.#props.clock.now().getTime() : '';
    return [policy.quota, policy.windowSeconds, this.#margin.minMs, this.#margin.ratio, now];
  }

  #nextMember(): string {
    this.#sequence = (this.#sequence + 1) % Number.MAX_SAFE_INTEGER;
    return `${this.#member}:${this.#sequence}`;
  }
}
