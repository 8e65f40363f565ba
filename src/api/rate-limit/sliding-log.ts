import type { Clock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { ReceivablesError } from '../errors.js';
import { FairLine } from './fair-line.js';
import { type Flow, flowOrCurrent } from './flow.js';
import { InFlight } from './in-flight.js';
import {
  type LimiterOptions,
  LOOKBACK_MAX_MS,
  type MarginRule,
  marginRule,
  PROBE_POLICY,
  type Reaction,
  reactionTo,
  SLOW_START_PROBE_MS,
  spanMs,
} from './policy.js';
import {
  emptyLimiterStats,
  type MeteredRateLimiter,
  type RateInfo,
  type RateLimiterStats,
  type RateLimitPolicy,
  type Sleep,
} from './types.js';
import { WaitBoard } from './wait-board.js';

export interface SlidingLogRateLimiterProps extends LimiterOptions {
  clock: Clock;
  sleep: Sleep;
}

interface KeyState {
  /** Admission times (ms), ascending; also holds phantoms standing for other clients' requests. */
  log: number[];
  pauseUntil: number;
  /** The policy the server told; undefined until then. */
  policy: RateLimitPolicy | undefined;
  /** Whether a response has carried `RateLimit: r` (ends the slow start). */
  counted: boolean;
  /** Slow start: until when the one request sent is waited for (ms); 0 when none is. */
  probeUntil: number;
}

/** The error `acquire` rejects with once the limiter is closed. */
export const limiterClosed = () => new ReceivablesError('RATE_LIMITER_CLOSED', 'The rate limiter is closed');

/**
 * An exact sliding log in memory, for a single process (no Redis): a request is admitted when fewer
 * than `q` requests were admitted in the last `w + margin` ms. Same semantics as `RedisRateLimiter`;
 * time and waiting are injected, so tests drive it with a `ManualClock` and no real sleeps.
 *
 * @example
 * const limiter = new SlidingLogRateLimiter({ clock: systemClock, sleep: timerSleep });
 * await limiter.acquire(budgetKey, signal);
 * const response = await fetch(url);
 * await limiter.observe(budgetKey, parseRateInfo(response.status, response.headers));
 */
export class SlidingLogRateLimiter implements MeteredRateLimiter {
  readonly #props: SlidingLogRateLimiterProps;
  readonly #margin: MarginRule;
  readonly #keys = new Map<string, KeyState>();
  readonly #closing = new AbortController();
  readonly #log: Logger | undefined;
  readonly #stats: RateLimiterStats = emptyLimiterStats();
  readonly #inFlight = new InFlight<number>();
  readonly #waits = new WaitBoard(
    () => this.#now(),
    () => this.#line.queued,
  );
  readonly #line = new FairLine({
    check: (key) => this.#tryTake(key),
    sleep: (ms, signal) => this.#props.sleep(ms, signal),
    now: () => this.#now(),
    during: (wakesAt, sleep) => this.#waits.during(wakesAt, sleep),
    closing: this.#closing.signal,
    closedError: limiterClosed,
  });
  #told: RateLimitPolicy | undefined;

  constructor(props: SlidingLogRateLimiterProps) {
    this.#props = props;
    this.#margin = marginRule(props);
    this.#log = props.logger?.child({ component: 'rate-limiter', store: 'memory' });
  }

  /**
   * Callers of one key wait in a `FairLine`, admitted in the order of their flows' virtual finish
   * tags; one check of the log and one timer per key, whatever the number of callers. `flow`
   * defaults to the current `withFlow`, else the implicit flow.
   */
  async acquire(key: string, signal?: AbortSignal, flow?: Flow): Promise<number> {
    const started = this.#now();
    try {
      await this.#line.turn(key, flowOrCurrent(flow), signal);
    } catch (error) {
      if (this.#closing.signal.aborted) throw limiterClosed();
      throw error;
    }
    const waited = this.#now() - started;
    this.#stats.acquired++;
    this.#stats.waitedMsTotal += waited;
    return waited;
  }

  /**
   * Restamps this process's oldest unanswered admission of `key` with now (the server counted that
   * request before answering), ends a slow-start wait, then follows the headers.
   */
  async observe(key: string, info: RateInfo): Promise<void> {
    const state = this.#state(key);
    this.#restamp(key, state);
    state.probeUntil = 0;
    const reaction = reactionTo(info, this.#props.policyName);
    if (reaction) this.#apply(key, reaction);
  }

  stats(): RateLimiterStats {
    return { ...this.#stats, ...this.#waits.report(), ...(this.#told ? { policy: this.#told } : {}) };
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }

  /** Requests counted for `key` in the current `w + margin` span (tests, diagnostics). */
  inWindow(key: string): number {
    const state = this.#state(key);
    return countAfter(state.log, this.#now() - spanMs(this.#policy(state), this.#margin));
  }

  #tryTake(key: string): { waitMs: number; known: boolean } {
    this.#stats.checks = (this.#stats.checks ?? 0) + 1;
    const state = this.#state(key);
    const now = this.#now();
    const known = state.policy !== undefined;
    if (state.pauseUntil > now) return { waitMs: state.pauseUntil - now, known };
    // Slow start: one request at a time until the server has said how much of its window is used.
    if (!state.counted && state.probeUntil > now) return { waitMs: state.probeUntil - now, known: false };
    const policy = this.#policy(state);
    const span = spanMs(policy, this.#margin);
    dropUpTo(state.log, now - span - LOOKBACK_MAX_MS);
    const first = firstAfter(state.log, now - span);
    const counted = state.log.length - first;
    if (counted < policy.quota) {
      insert(state.log, now);
      this.#inFlight.add(key, now, now);
      if (!state.counted) state.probeUntil = now + SLOW_START_PROBE_MS;
      return { waitMs: 0, known };
    }
    // Wait until enough of the oldest entries leave the span for one more to fit.
    return { waitMs: state.log[first + counted - policy.quota]! + span - now, known };
  }

  #apply(key: string, reaction: Reaction): void {
    const state = this.#state(key);
    const now = this.#now();
    if (reaction.rateLimited) this.#stats.rateLimited++;
    if (reaction.policy && !samePolicy(reaction.policy, state.policy)) {
      this.#log?.info({ key, from: state.policy, to: reaction.policy }, 'rate-limit policy set');
      state.policy = reaction.policy;
    }
    if (reaction.policy) this.#told = reaction.policy;
    if (reaction.pauseMs !== undefined) this.#pause(key, state, now, reaction.pauseMs, 'retry-after');
    const seen = reaction.remaining;
    if (seen === undefined || state.policy === undefined) return;
    state.counted = true;
    const since = now - seen.lookbackMs - spanMs(state.policy, this.#margin);
    const ours = countAfter(state.log, since);
    const foreign = state.policy.quota - seen.remaining - ours;
    if (foreign <= 0) return;
    for (let i = 0; i < foreign; i++) insert(state.log, now);
    this.#stats.foreignRequests += foreign;
    this.#log?.debug({ key, foreign, remaining: seen.remaining }, 'other clients use this budget');
    if (seen.remaining === 0 && seen.resetSeconds > 0) {
      this.#pause(key, state, now, seen.resetSeconds * 1000, 'budget used by other clients');
    }
  }

  /** Moves the oldest unanswered admission's entry to now: an upper bound of when the server counted it. */
  #restamp(key: string, state: KeyState): void {
    const now = this.#now();
    const kept = now - spanMs(this.#policy(state), this.#margin) - LOOKBACK_MAX_MS / 2;
    for (;;) {
      const admitted = this.#inFlight.oldest(key, kept);
      if (admitted === undefined || admitted >= now) return;
      const at = firstAfter(state.log, admitted) - 1;
      if (at < 0 || state.log[at] !== admitted) continue; // left the log (a policy change): the next one
      state.log.splice(at, 1);
      insert(state.log, now);
      this.#stats.restamped = (this.#stats.restamped ?? 0) + 1;
      return;
    }
  }

  #pause(key: string, state: KeyState, now: number, ms: number, reason: string): void {
    this.#stats.pauses++;
    state.pauseUntil = Math.max(state.pauseUntil, now + ms);
    this.#log?.warn({ key, pauseMs: ms, reason }, 'rate limiter paused');
  }

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (!state) {
      // A configured default policy is vouched for by the caller: no slow start.
      const counted = this.#props.defaultPolicy !== undefined;
      state = { log: [], pauseUntil: 0, policy: undefined, counted, probeUntil: 0 };
      this.#keys.set(key, state);
    }
    return state;
  }

  #policy(state: KeyState): RateLimitPolicy {
    return state.policy ?? this.#props.defaultPolicy ?? PROBE_POLICY;
  }

  #now(): number {
    return this.#props.clock.now().getTime();
  }
}

const samePolicy = (a: RateLimitPolicy, b: RateLimitPolicy | undefined) =>
  b !== undefined && a.quota === b.quota && a.windowSeconds === b.windowSeconds;

/** Index of the first entry strictly after `t` (binary search on the ascending log). */
function firstAfter(log: number[], t: number): number {
  let lo = 0;
  let hi = log.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (log[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const countAfter = (log: number[], t: number) => log.length - firstAfter(log, t);

function dropUpTo(log: number[], t: number): void {
  const drop = firstAfter(log, t);
  if (drop > 0) log.splice(0, drop);
}

function insert(log: number[], t: number): void {
  log.splice(firstAfter(log, t), 0, t);
}
