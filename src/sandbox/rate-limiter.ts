import type { RatePolicy } from './options.js';

export interface RateDecision {
  allowed: boolean;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window (0 when the window is empty). */
  resetSeconds: number;
  /** On a refusal: whole seconds to wait before a request would be allowed. */
  retryAfterSeconds: number;
}

/**
 * An exact sliding-window log: a request is allowed when fewer than `quota` requests were allowed
 * in the last `windowSeconds`. Refused requests are not counted.
 */
export class SlidingWindowLimiter {
  readonly #logs = new Map<string, number[]>();

  constructor(readonly policy: RatePolicy) {}

  take(key: string, nowMs: number): RateDecision {
    const windowMs = this.policy.windowSeconds * 1000;
    const log = this.#prune(key, nowMs - windowMs);
    if (log.length >= this.policy.quota) {
      const waitMs = log[0]! + windowMs - nowMs;
      return {
        allowed: false,
        remaining: 0,
        resetSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
        retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)),
      };
    }
    log.push(nowMs);
    const oldest = log[0]!;
    return {
      allowed: true,
      remaining: this.policy.quota - log.length,
      resetSeconds: Math.max(0, Math.ceil((oldest + windowMs - nowMs) / 1000)),
      retryAfterSeconds: 0,
    };
  }

  /** Requests counted in the window ending at `nowMs`, for tests and the admin view. */
  count(key: string, nowMs: number): number {
    return this.#prune(key, nowMs - this.policy.windowSeconds * 1000).length;
  }

  #prune(key: string, fromMs: number): number[] {
    let log = this.#logs.get(key);
    if (!log) {
      log = [];
      this.#logs.set(key, log);
    }
    let drop = 0;
    while (drop < log.length && log[drop]! <= fromMs) drop++;
    if (drop > 0) log.splice(0, drop);
    return log;
  }
}

/** `"public-api";q=300;w=60` */
export const policyHeader = (name: string, policy: RatePolicy) =>
  `"${name}";q=${policy.quota};w=${policy.windowSeconds}`;

/** The rate-limit headers of the spec for one decision. */
export function rateHeaders(
  name: string,
  policy: RatePolicy,
  decision: RateDecision,
  nowMs: number,
): Record<string, string> {
  const headers: Record<string, string> = {
    'RateLimit-Policy': policyHeader(name, policy),
    RateLimit: `"${name}";r=${decision.remaining};t=${decision.resetSeconds}`,
    'X-RateLimit-Limit': String(policy.quota),
    'X-RateLimit-Remaining': String(decision.remaining),
    'X-RateLimit-Reset': String(Math.ceil(nowMs / 1000) + decision.resetSeconds),
  };
  if (!decision.allowed) headers['Retry-After'] = String(decision.retryAfterSeconds);
  return headers;
}
