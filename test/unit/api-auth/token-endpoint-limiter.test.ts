import { describe, expect, it } from 'vitest';
import { createTokenEndpointLimiter } from '../../../src/api/auth/token-endpoint-limiter.js';
import { ManualClock } from '../../../src/domain/clock.js';

function limiter() {
  const clock = new ManualClock();
  const sleeps: number[] = [];
  const sleep = async (ms: number) => {
    sleeps.push(ms);
    clock.advance(ms);
  };
  return { clock, sleeps, limiter: createTokenEndpointLimiter({ clock, sleep }) };
}

describe('token endpoint limiter', () => {
  it('when 10 calls were made, then the 11th waits until the first leaves the 60 s window (plus margin)', async () => {
    const { clock, limiter: l } = limiter();
    for (let i = 0; i < 10; i++) {
      await l.acquire('token-endpoint:h');
      clock.advance(1000);
    }
    const before = clock.now().getTime();
    await l.acquire('token-endpoint:h');
    const waited = clock.now().getTime() - before;
    expect(waited).toBeGreaterThanOrEqual(50_000);
    expect(waited).toBeLessThanOrEqual(51_000);
  });

  it('when the server announces "auth";q=3;w=4, then the budget follows it', async () => {
    const { clock, limiter: l } = limiter();
    await l.observe('k', { status: 200, policy: { name: 'auth', quota: 3, windowSeconds: 4 } });
    for (let i = 0; i < 3; i++) await l.acquire('k');
    const before = clock.now().getTime();
    await l.acquire('k');
    expect(clock.now().getTime() - before).toBeGreaterThanOrEqual(4000);
  });

  it('when the public-api policy is announced, then it does not resize the token endpoint budget', async () => {
    const { sleeps, limiter: l } = limiter();
    await l.observe('k', { status: 200, policy: { name: 'public-api', quota: 1, windowSeconds: 60 } });
    for (let i = 0; i < 10; i++) await l.acquire('k');
    expect(sleeps).toEqual([]);
  });

  it('when a 429 says Retry-After 7, then the next call waits 7 s', async () => {
    const { clock, limiter: l } = limiter();
    await l.observe('k', { status: 429, retryAfterSeconds: 7 });
    const before = clock.now().getTime();
    await l.acquire('k');
    expect(clock.now().getTime() - before).toBeGreaterThanOrEqual(7000);
  });
});
