import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MARGIN, marginMs, PROBE_POLICY } from '../../../src/api/rate-limit/policy.js';
import { SlidingLogRateLimiter } from '../../../src/api/rate-limit/sliding-log.js';
import { createLogger } from '../../../src/logging/logger.js';
import { rateInfo } from '../../support/rate-info.js';
import { VirtualTime } from '../../support/virtual-time.js';

const KEY = 'budget-1';
const policyInfo = rateInfo;

function setup(marginMsOption = 500) {
  const time = new VirtualTime();
  const limiter = new SlidingLogRateLimiter({
    clock: time.clock,
    sleep: time.sleep,
    marginMs: marginMsOption,
  });
  /** Runs `n` concurrent acquires and returns each admission time (ms since start), in order of admission. */
  const burst = async (n: number, key = KEY) => {
    const admitted: number[] = [];
    await time.run(
      Promise.all(Array.from({ length: n }, () => limiter.acquire(key).then(() => admitted.push(time.t)))),
    );
    return admitted;
  };
  return { time, limiter, burst };
}

/** Largest number of admissions in any half-open interval of `spanMs`. */
function maxInAnySpan(times: number[], spanMs: number): number {
  let max = 0;
  for (const t of times) max = Math.max(max, times.filter((u) => u >= t && u < t + spanMs).length);
  return max;
}

describe('SlidingLogRateLimiter', () => {
  it('when a burst of 3.4 q requests arrives, then no w + margin span holds more than q and each batch waits for the oldest to leave', async () => {
    const { limiter, burst } = setup(500);
    await limiter.observe(KEY, policyInfo(5, 10));
    const admitted = await burst(17);
    expect(admitted).toHaveLength(17);
    expect(maxInAnySpan(admitted, 10_500)).toBe(5);
    expect(admitted).toEqual([
      ...Array(5).fill(0),
      ...Array(5).fill(10_500),
      ...Array(5).fill(21_000),
      ...Array(2).fill(31_500),
    ]);
  });

  it('when requests are spread out, then one is admitted as soon as the oldest of the last q leaves', async () => {
    const { time, limiter } = setup(500);
    await limiter.observe(KEY, policyInfo(2, 1));
    await time.run(limiter.acquire(KEY));
    time.clock.advance(300);
    await time.run(limiter.acquire(KEY));
    const waited = await time.run(limiter.acquire(KEY));
    expect(time.t).toBe(1500);
    expect(waited).toBe(1200);
  });

  it('when no policy was told yet, then one probe request is admitted and the others are admitted within 50 ms of the first answer', async () => {
    const { time, limiter } = setup(250);
    const admitted: number[] = [];
    const all = Promise.all(
      Array.from({ length: 4 }, () => limiter.acquire(KEY).then(() => admitted.push(time.t))),
    );
    const answered = (async () => {
      await time.sleep(120);
      await limiter.observe(KEY, policyInfo(10, 60));
    })();
    await time.run(Promise.all([all, answered]));
    expect(admitted[0]).toBe(0);
    expect(admitted.slice(1).every((t) => t > 120 && t <= 170)).toBe(true);
    expect(PROBE_POLICY).toEqual({ quota: 1, windowSeconds: 1 });
  });

  it('when a configured default policy is given, then it is used until the server tells one, with no slow start', async () => {
    const time = new VirtualTime();
    const limiter = new SlidingLogRateLimiter({
      clock: time.clock,
      sleep: time.sleep,
      defaultPolicy: { quota: 3, windowSeconds: 60 },
    });
    await time.run(Promise.all([limiter.acquire(KEY), limiter.acquire(KEY), limiter.acquire(KEY)]));
    expect(time.t).toBe(0);
    expect(limiter.inWindow(KEY)).toBe(3);
  });

  it('when RateLimit-Policy grows or shrinks, then the budget is resized to it', async () => {
    const { time, limiter, burst } = setup(500);
    await limiter.observe(KEY, policyInfo(3, 10));
    expect(await burst(3)).toEqual([0, 0, 0]);
    await limiter.observe(KEY, policyInfo(6, 10));
    expect(await burst(3)).toEqual([0, 0, 0]);
    await limiter.observe(KEY, policyInfo(2, 10));
    time.clock.advance(1000);
    // six admitted in the span, the new quota is 2: wait until five of them have left.
    expect(await burst(1)).toEqual([10_500]);
  });

  it('when a 429 carries Retry-After, then every acquire of that key waits that long and other keys do not', async () => {
    const { time, limiter } = setup();
    await limiter.observe(KEY, policyInfo(100, 60));
    await limiter.observe(KEY, { status: 429, retryAfterSeconds: 2, remaining: 0, resetSeconds: 2 });
    const waited = await time.run(limiter.acquire(KEY));
    expect(waited).toBe(2000);
    expect(await time.run(limiter.acquire('another-budget'))).toBe(0);
    expect(limiter.stats()).toMatchObject({ rateLimited: 1, pauses: 1, foreignRequests: 0 });
  });

  it('when a 409 carries Retry-After, then the key is paused too; a later shorter pause does not shorten it', async () => {
    const { time, limiter } = setup();
    await limiter.observe(KEY, policyInfo(100, 60));
    await limiter.observe(KEY, { status: 409, retryAfterSeconds: 3 });
    await limiter.observe(KEY, { status: 429, retryAfterSeconds: 1 });
    expect(await time.run(limiter.acquire(KEY))).toBe(3000);
  });

  it('when a 429 has no Retry-After, then the key pauses for the RateLimit reset, or 1 s', async () => {
    const { time, limiter } = setup();
    await limiter.observe(KEY, { status: 429, resetSeconds: 4 });
    expect(await time.run(limiter.acquire(KEY))).toBe(4000);
    await limiter.observe('k2', { status: 429 });
    expect(await time.run(limiter.acquire('k2'))).toBe(1000);
  });

  it('when RateLimit says r=0 and our own log explains fewer requests, then the others are logged as phantoms and the key pauses for t', async () => {
    const { time, limiter } = setup(500);
    await limiter.observe(KEY, policyInfo(10, 10));
    await time.run(Promise.all([limiter.acquire(KEY), limiter.acquire(KEY)]));
    await limiter.observe(KEY, policyInfo(10, 10, { remaining: 0, resetSeconds: 4 }));
    expect(limiter.stats().foreignRequests).toBe(8);
    expect(limiter.inWindow(KEY)).toBe(10);
    expect(await time.run(limiter.acquire(KEY))).toBe(10_500);
    expect(limiter.stats().pauses).toBe(1);
  });

  it('when RateLimit r is lower than our local remaining, then only the difference is added', async () => {
    const { time, limiter } = setup(500);
    await limiter.observe(KEY, policyInfo(10, 10));
    await time.run(Promise.all(Array.from({ length: 4 }, () => limiter.acquire(KEY))));
    await limiter.observe(KEY, policyInfo(10, 10, { remaining: 3, resetSeconds: 10 }));
    expect(limiter.stats()).toMatchObject({ foreignRequests: 3, pauses: 0 });
    expect(await time.run(limiter.acquire(KEY))).toBe(0);
  });

  it('when RateLimit r is explained by our own requests, including ones that left our span while a slow response was under way, then nothing is added', async () => {
    const { time, limiter } = setup(500);
    await limiter.observe(KEY, policyInfo(5, 10));
    await time.run(Promise.all(Array.from({ length: 5 }, () => limiter.acquire(KEY))));
    await limiter.observe(KEY, policyInfo(5, 10, { remaining: 0, resetSeconds: 10 }));
    time.clock.advance(12_000); // the response of a request that arrived at t=9.9 s comes 2.1 s later
    await limiter.observe(KEY, policyInfo(5, 10, { remaining: 0, resetSeconds: 1, elapsedMs: 2_100 }));
    expect(limiter.stats()).toMatchObject({ foreignRequests: 0, pauses: 0 });
  });

  it('when the response belongs to another policy (the token endpoint), then it is ignored', async () => {
    const { time, limiter } = setup();
    await limiter.observe(KEY, {
      status: 429,
      policy: { name: 'auth', quota: 10, windowSeconds: 60 },
      retryAfterSeconds: 30,
    });
    expect(await time.run(limiter.acquire(KEY))).toBe(0);
  });

  it('when the signal aborts during a wait, then acquire rejects with its reason; after close, with RATE_LIMITER_CLOSED', async () => {
    const { time, limiter } = setup();
    await limiter.observe(KEY, { status: 429, retryAfterSeconds: 60 });
    const controller = new AbortController();
    const pending = limiter.acquire(KEY, controller.signal);
    controller.abort(new Error('stop'));
    await expect(pending).rejects.toThrow('stop');
    const waiting = limiter.acquire(KEY);
    await new Promise((r) => setImmediate(r));
    await limiter.close();
    await expect(waiting).rejects.toMatchObject({ code: 'RATE_LIMITER_CLOSED', retryable: false });
    await expect(time.run(limiter.acquire('k2'))).rejects.toMatchObject({ code: 'RATE_LIMITER_CLOSED' });
  });

  it('when requests wait, then the stats add up the time waited', async () => {
    const { limiter, burst } = setup(500);
    await limiter.observe(KEY, policyInfo(1, 1));
    await burst(3);
    expect(limiter.stats()).toMatchObject({ acquired: 3, waitedMsTotal: 1500 + 3000 });
  });

  it('when requests wait for the budget, then the stats tell who waits, when requests resume, the time held up and the policy', async () => {
    const { time, limiter } = setup(500);
    expect(limiter.stats().waiting).toBeUndefined();
    await limiter.observe(KEY, policyInfo(1, 10));
    expect(limiter.stats().policy).toEqual({ quota: 1, windowSeconds: 10 });
    await limiter.acquire(KEY);
    const both = Promise.all([limiter.acquire(KEY), limiter.acquire(KEY)]);
    await new Promise((r) => setImmediate(r));
    // Both sleep until the first admission leaves the 10.5 s span; the second then sleeps again.
    expect(limiter.stats().waiting).toEqual({ calls: 2, resumesAt: time.start + 10_500 });
    await time.run(both);
    const stats = limiter.stats();
    expect(stats.waiting).toBeUndefined();
    // Wall time held up: 21 s, while the callers' waits add up to 10.5 + 21 s.
    expect(stats.heldMs).toBe(21_000);
    expect(stats.waitedMsTotal).toBe(31_500);
  });

  it('when a pause is set, then a warning names the key and the pause, and no token appears in the logs', async () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const time = new VirtualTime();
    const logger = createLogger({ level: 'debug', destination });
    const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, logger });
    await limiter.observe('3f2a9c', { status: 429, retryAfterSeconds: 2 });
    const logged = lines.map((line) => JSON.parse(line));
    expect(logged).toContainEqual(
      expect.objectContaining({ component: 'rate-limiter', key: '3f2a9c', pauseMs: 2000, level: 40 }),
    );
    expect(lines.join('')).not.toMatch(/sbx_|Bearer/);
  });
});

describe('margin', () => {
  it('when no margin is configured, then it is max(250 ms, 1 % of the window)', () => {
    expect(marginMs({ quota: 300, windowSeconds: 60 }, DEFAULT_MARGIN)).toBe(600);
    expect(marginMs({ quota: 20, windowSeconds: 2 }, DEFAULT_MARGIN)).toBe(250);
  });
});
