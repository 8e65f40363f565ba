import { describe, expect, it } from 'vitest';
import { parseRateInfo, parseRetryAfter } from '../../../src/api/rate-limit/headers.js';

const headers = (init: Record<string, string>) => new Headers(init);

describe('parseRateInfo', () => {
  it('when the spec headers are present, then policy, remaining and reset are read with the policy name', () => {
    const info = parseRateInfo(
      200,
      headers({ 'RateLimit-Policy': '"public-api";q=300;w=60', RateLimit: '"public-api";r=12;t=30' }),
    );
    expect(info).toEqual({
      status: 200,
      policy: { name: 'public-api', quota: 300, windowSeconds: 60 },
      remaining: 12,
      resetSeconds: 30,
    });
  });

  it('when parameters are reordered and spaced, then they are read all the same', () => {
    const info = parseRateInfo(
      200,
      headers({ 'RateLimit-Policy': ' "public-api" ; w=2 ;q=20 ; x=1', RateLimit: '"public-api"; t=1;r=0' }),
    );
    expect(info.policy).toEqual({ name: 'public-api', quota: 20, windowSeconds: 2 });
    expect(info.remaining).toBe(0);
    expect(info.resetSeconds).toBe(1);
  });

  it('when the header lists several policies, then public-api is read, or the first one', () => {
    const list = headers({ 'RateLimit-Policy': '"burst";q=5;w=1, "public-api";q=300;w=60' });
    expect(parseRateInfo(200, list).policy).toEqual({ name: 'public-api', quota: 300, windowSeconds: 60 });
    const other = headers({ 'RateLimit-Policy': '"auth";q=10;w=60' });
    expect(parseRateInfo(200, other).policy).toEqual({ name: 'auth', quota: 10, windowSeconds: 60 });
    expect(parseRateInfo(200, other, { policyName: 'auth' }).policy?.quota).toBe(10);
  });

  it('when a policy name holds a comma or a semicolon inside quotes, then it is kept whole', () => {
    const info = parseRateInfo(200, headers({ 'RateLimit-Policy': '"a,b;c";q=3;w=4' }));
    expect(info.policy).toEqual({ name: 'a,b;c', quota: 3, windowSeconds: 4 });
  });

  it('when a policy is unreadable or zero, then it is left out rather than guessed', () => {
    for (const value of [
      '"public-api";q=abc;w=60',
      '"public-api";q=300',
      '"public-api";q=0;w=60',
      'garbage',
    ]) {
      expect(parseRateInfo(200, headers({ 'RateLimit-Policy': value })).policy).toBeUndefined();
    }
    expect(parseRateInfo(200, headers({ RateLimit: '"public-api";r=-1;t=x' }))).toEqual({ status: 200 });
  });

  it('when only the legacy X-RateLimit headers are present, then remaining and reset come from them', () => {
    const info = parseRateInfo(
      200,
      headers({
        Date: 'Thu, 15 Jan 2026 10:00:00 GMT',
        'X-RateLimit-Remaining': '7',
        'X-RateLimit-Reset': String(Date.parse('2026-01-15T10:00:25Z') / 1000),
      }),
    );
    expect(info.remaining).toBe(7);
    expect(info.resetSeconds).toBe(25);
  });

  it('when Retry-After is in seconds, then retryAfterSeconds is that number', () => {
    expect(parseRateInfo(429, headers({ 'Retry-After': ' 40 ' })).retryAfterSeconds).toBe(40);
  });

  it('when Retry-After is an HTTP-date, then it is measured from the response Date header', () => {
    const info = parseRateInfo(
      429,
      headers({ Date: 'Thu, 15 Jan 2026 10:00:00 GMT', 'Retry-After': 'Thu, 15 Jan 2026 10:00:12 GMT' }),
      { now: new Date('2030-01-01T00:00:00Z') },
    );
    expect(info.retryAfterSeconds).toBe(12);
  });

  it('when Retry-After is an HTTP-date without a Date header, then it is measured from the given now', () => {
    const now = new Date('2026-01-15T10:00:00Z');
    expect(parseRetryAfter('Thu, 15 Jan 2026 10:00:03 GMT', now)).toBe(3);
    expect(parseRetryAfter('Thu, 15 Jan 2026 09:59:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});
