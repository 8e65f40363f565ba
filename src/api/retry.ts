import { ReceivablesError } from './errors.js';

/** How the client retries one logical request. Every field is documented with its default. */
export interface RetryPolicy {
  /** HTTP attempts per logical request, the first one included (default 8). */
  maxAttempts: number;
  /** The backoff ceiling of the first retry before jitter (default 200 ms); doubles each retry. */
  baseDelayMs: number;
  /** The backoff ceiling never grows past this (default 30 s); a longer Retry-After still wins. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 8, baseDelayMs: 200, maxDelayMs: 30_000 };

/**
 * Whether a failed attempt may be tried again. The status decision lives in `isRetryableStatus`
 * (errors.ts) and reaches here through `ReceivablesError.retryable`: network errors, timeouts,
 * 408, 409 (idempotency key still running), 429 and 5xx (503 included: the idempotency store was
 * unreachable and nothing ran) are retried; every other 4xx and anything unknown is not.
 */
export function isRetryable(error: unknown): boolean {
  return error instanceof ReceivablesError && error.retryable;
}

/**
 * The wait before retry number `retry` (0 for the first retry): "full jitter", a uniform draw in
 * [0, min(maxDelayMs, baseDelayMs * 2^retry)), but never less than the server's Retry-After.
 *
 * @example
 * backoffDelay({ retry: 3, policy, random: () => 0.5 }); // 0.5 * min(30000, 200 * 8) = 800
 */
export function backoffDelay(input: {
  retry: number;
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>;
  random: () => number;
  retryAfterMs?: number | undefined;
}): number {
  const { retry, policy, random } = input;
  // 2^retry overflows nothing useful past ~50; cap the exponent so the product stays finite.
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(retry, 50));
  const jittered = Math.floor(clampUnit(random()) * ceiling);
  return Math.max(jittered, input.retryAfterMs ?? 0);
}

/** A random source may return exactly 1 or stray values; keep the draw inside [0, 1). */
function clampUnit(value: number): number {
  if (!Number.isFinite(value) || value < 0) return 0;
  return value >= 1 ? 1 - Number.EPSILON : value;
}
