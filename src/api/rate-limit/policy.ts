import type { Logger } from '../../logging/logger.js';
import { PUBLIC_API_POLICY } from './headers.js';
import type { RateInfo, RateLimitPolicy } from './types.js';

/**
 * The latency margin: how much later than its admission a request may be counted by the server.
 * The limiter counts over `w + margin` so that any server window of `w` seconds only sees requests
 * admitted within one `w + margin` interval (proof in docs/rate-limiting.md).
 */
export interface MarginRule {
  /** Smallest margin, ms. */
  minMs: number;
  /** Share of the window added as margin (0.01 = 1 % of w). */
  ratio: number;
}

/** max(250 ms, 1 % of w): 600 ms for the spec's 60 s window (99 % of the quota usable). */
export const DEFAULT_MARGIN: MarginRule = { minMs: 250, ratio: 0.01 };

/**
 * The policy assumed for a key until a response tells the real one, when none is configured:
 * one request per second. The first response carries `RateLimit-Policy` and resizes the budget; a
 * guess such as the spec's 300/60 could overrun a smaller real policy before any answer arrives.
 */
export const PROBE_POLICY: RateLimitPolicy = { quota: 1, windowSeconds: 1 };

/** While a key's policy is not known yet, or its slow start waits for an answer, the first waiter re-checks at least this often (ms). */
export const UNKNOWN_POLICY_POLL_MS = 50;

/**
 * Slow start: until a response of the key has carried `RateLimit: r` (the server's own count), one
 * request at a time goes; the first `r` then sizes the first burst (the rest of the window is logged
 * as other usage). An unanswered request (lost, timed out) gives its turn up after this long (ms).
 * Not applied when a `defaultPolicy` is configured: the caller vouches for that starting budget
 * (the token endpoint's spec policy, whose calls are few and one at a time).
 */
export const SLOW_START_PROBE_MS = 2_000;

/**
 * How far back (ms) the log is kept beyond the window, so that a `RateLimit: r=` read from a slow
 * response is compared with the log as it was when the request arrived (`RateInfo.elapsedMs`,
 * capped to this).
 */
export const LOOKBACK_MAX_MS = 30_000;

/**
 * Redis: how long (ms) after its edge a waiting ticket that nobody checks again lapses: the process that
 * held it was killed (or froze), and the waiters behind it go on. A live waiter that checks late
 * keeps its place (it passes its tag back).
 */
export const TICKET_GRACE_MS = 3_000;

/**
 * Redis: how much later (ms) than its slot's edge a waiter checks: the entry that frees the slot is often
 * restamped a few ms after its admission (its answer), and the tickets ahead check a few ms after
 * their own edges (timers, the Redis round trip). Added once per span to the edge Redis names (so a
 * waiter rarely wakes just before its slot and checks twice), and the lateness past which a ticket
 * ahead counts as missing its edge. Costs at most this much of each slot's cycle (0.03 % at 60 s).
 */
export const CHECK_SLACK_MS = 20;

/**
 * Pacing of a saturated budget (Redis limiter): once requests had to wait for a full log, at most
 * ceil(q / PACE_SLICES) are admitted in any (w + margin) / PACE_SLICES, for two spans after the
 * last wait. The rate is the policy's, but freed slots are handed out a slice at a time
 * instead of in the bursts they were used in: a source that starts waiting behind a backlog is
 * admitted within about one slice (5 s of 300 / 60 s), not when the next burst of slots frees
 * (up to a whole window). An idle budget still takes a full burst at once.
 */
export const PACE_SLICES = 12;

/** Options common to the in-process and the Redis limiter. */
export interface LimiterOptions {
  /** Policy assumed until a response of the key tells one, with no slow start. Default `PROBE_POLICY`. */
  defaultPolicy?: RateLimitPolicy | undefined;
  /** A fixed latency margin (ms) instead of the default rule max(250 ms, 1 % of w). */
  marginMs?: number | undefined;
  /** Only responses of this policy name are followed. Default `public-api`. */
  policyName?: string | undefined;
  logger?: Logger | undefined;
}

export function marginRule(options: LimiterOptions): MarginRule {
  return options.marginMs === undefined ? DEFAULT_MARGIN : { minMs: options.marginMs, ratio: 0 };
}

/** The margin (ms) applied to `policy`. */
export function marginMs(policy: RateLimitPolicy, rule: MarginRule): number {
  return Math.max(rule.minMs, Math.ceil(policy.windowSeconds * 1000 * rule.ratio));
}

/** The span (ms) the limiter counts over: w + margin. */
export function spanMs(policy: RateLimitPolicy, rule: MarginRule): number {
  return Math.ceil(policy.windowSeconds * 1000) + marginMs(policy, rule);
}

/** What one response asks the limiter to do; computed the same way for both limiters. */
export interface Reaction {
  /** Resize the budget to this policy. */
  policy?: RateLimitPolicy;
  /** Pause every process of the key for this long (ms) from now. */
  pauseMs?: number;
  /** Follow `RateLimit: r, t`: infer other clients' usage from the server's count. */
  remaining?: { remaining: number; resetSeconds: number; lookbackMs: number };
  rateLimited: boolean;
}

/**
 * Reads one response:
 * - `RateLimit-Policy` resizes the budget;
 * - `Retry-After` on a 429 or 409 pauses the key (a 429 without it pauses for `t`, or 1 s);
 * - `RateLimit: r, t` on other responses is compared with the log (a 429's `r=0` adds nothing to its
 *   Retry-After, and may come from a forced refusal rather than a full window).
 * Responses of another policy (e.g. `auth`, the token endpoint) are ignored.
 */
export function reactionTo(info: RateInfo, policyName = PUBLIC_API_POLICY): Reaction | undefined {
  if (info.policy !== undefined && info.policy.name !== policyName) return undefined;
  const reaction: Reaction = { rateLimited: info.status === 429 };
  if (info.policy) reaction.policy = { quota: info.policy.quota, windowSeconds: info.policy.windowSeconds };
  if (info.status === 429 || info.status === 409) {
    const seconds = info.retryAfterSeconds ?? (info.status === 429 ? (info.resetSeconds ?? 1) : undefined);
    if (seconds !== undefined && seconds > 0) reaction.pauseMs = Math.ceil(seconds * 1000);
  }
  if (info.status !== 429 && info.remaining !== undefined) {
    reaction.remaining = {
      remaining: info.remaining,
      resetSeconds: info.resetSeconds ?? 0,
      lookbackMs: Math.min(Math.max(0, info.elapsedMs ?? 0), LOOKBACK_MAX_MS),
    };
  }
  return reaction;
}
