import { describe, expect, it } from 'vitest';
import { ApiResponseError, FilterError, NetworkError, TimeoutError } from '../../../src/api/errors.js';
import { backoffDelay, isRetryable } from '../../../src/api/retry.js';

const policy = { baseDelayMs: 100, maxDelayMs: 5_000 };
const apiError = (status: number) => new ApiResponseError({ status, method: 'POST', path: '/x' });

describe('backoff with full jitter', () => {
  it('when the draw varies, then the delay stays within [0, base * 2^retry)', () => {
    for (let retry = 0; retry < 6; retry++) {
      const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
      expect(backoffDelay({ retry, policy, random: () => 0 })).toBe(0);
      expect(backoffDelay({ retry, policy, random: () => 0.5 })).toBe(Math.floor(ceiling / 2));
      const top = backoffDelay({ retry, policy, random: () => 0.999999 });
      expect(top).toBeLessThan(ceiling);
      expect(top).toBeGreaterThanOrEqual(ceiling - 1);
    }
  });

  it('when the exponent grows past the cap, then maxDelayMs bounds the ceiling', () => {
    expect(backoffDelay({ retry: 10, policy, random: () => 0.999999 })).toBeLessThan(policy.maxDelayMs);
    expect(backoffDelay({ retry: 10_000, policy, random: () => 0.5 })).toBe(2_500);
  });

  it('when Retry-After is given, then the delay is never below it, even above the cap', () => {
    expect(backoffDelay({ retry: 0, policy, random: () => 0, retryAfterMs: 3_000 })).toBe(3_000);
    expect(backoffDelay({ retry: 0, policy, random: () => 0.9, retryAfterMs: 60_000 })).toBe(60_000);
    expect(backoffDelay({ retry: 6, policy, random: () => 0.9, retryAfterMs: 1_000 })).toBe(4_500);
  });

  it('when the random source misbehaves, then the draw is clamped into [0, 1)', () => {
    expect(backoffDelay({ retry: 0, policy, random: () => 1 })).toBeLessThan(100);
    expect(backoffDelay({ retry: 0, policy, random: () => -3 })).toBe(0);
    expect(backoffDelay({ retry: 0, policy, random: () => Number.NaN })).toBe(0);
  });
});

describe('what is retried', () => {
  it('when the failure is a network error, a timeout, 408, 409, 429 or 5xx, then it is retried', () => {
    expect(isRetryable(new NetworkError('reset'))).toBe(true);
    expect(isRetryable(new TimeoutError('slow'))).toBe(true);
    for (const status of [408, 409, 429, 500, 502, 503, 504])
      expect(isRetryable(apiError(status))).toBe(true);
  });

  it('when the failure is another 4xx or not an API error, then it is not retried', () => {
    for (const status of [400, 401, 403, 404, 413, 422]) expect(isRetryable(apiError(status))).toBe(false);
    expect(isRetryable(new FilterError('too long'))).toBe(false);
    expect(isRetryable(new TypeError('bug'))).toBe(false);
  });
});
