import { describe, expect, it } from 'vitest';
import { SLOW_START_PROBE_MS } from '../../../src/api/rate-limit/policy.js';
import { SlidingLogRateLimiter } from '../../../src/api/rate-limit/sliding-log.js';
import type { RateInfo } from '../../../src/api/rate-limit/types.js';
import { rateInfo } from '../../support/rate-info.js';
import { VirtualTime } from '../../support/virtual-time.js';

const KEY = 'budget-1';
const MARGIN = 500;

/** A response telling the policy and, unless `remaining` is undefined, the server's count; its window resets in w. */
const answer = (quota: number, windowSeconds: number, extra: Partial<RateInfo> = {}): RateInfo =>
  rateInfo(quota, windowSeconds, { resetSeconds: windowSeconds, ...extra });

function setup() {
  const time = new VirtualTime();
  const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, marginMs: MARGIN });
  /** Starts `n` acquires now; their admission times (ms since start) fill `admitted` in order. */
  const start = (n: number) => {
    const admitted: number[] = [];
    const all = Promise.all(
      Array.from({ length: n }, () => limiter.acquire(KEY).then(() => admitted.push(time.t))),
    );
    return { admitted, all };
  };
  /** Runs `steps` at the given times (ms since start), e.g. answers arriving. */
  const at = (steps: [number, () => Promise<void>][]) =>
    (async () => {
      for (const [t, step] of steps) {
        await time.sleep(t - time.t);
        await step();
      }
    })();
  return { time, limiter, start, at };
}

describe('restamping a log entry with its response time', () => {
  it('when a response is observed 300 ms after its admission, then its slot frees one span after the answer, not after the admission', async () => {
    const { time, limiter, start, at } = setup();
    await limiter.observe(KEY, answer(2, 10));
    const first = start(2);
    await time.run(first.all);
    expect(first.admitted).toEqual([0, 0]);
    // One answer comes back at 300 ms (the server counted it at most then); the other never does.
    await time.run(at([[300, () => limiter.observe(KEY, answer(2, 10, { remaining: 0 }))]]));
    expect(limiter.stats().restamped).toBe(1);
    const next = start(2);
    await time.run(next.all);
    // The unanswered one leaves at 0 + 10.5 s; the answered one at 0.3 + 10.5 s.
    expect(next.admitted).toEqual([10_500, 10_800]);
  });

  it('when answers come back out of order, then the oldest unanswered admission is the one restamped', async () => {
    const { time, limiter, start } = setup();
    await limiter.observe(KEY, answer(2, 10));
    await time.run(start(1).all); // at 0
    time.clock.advance(1_000);
    await time.run(start(1).all); // at 1000
    time.clock.advance(200);
    await limiter.observe(KEY, answer(2, 10, { remaining: 0 })); // the answer of either, at 1200
    const next = start(1);
    await time.run(next.all);
    // Entries are now 1000 and 1200: the next slot frees at 1000 + 10.5 s (not 0 + 10.5 s).
    expect(next.admitted).toEqual([11_500]);
  });

  it('when an answer comes back in the same millisecond as its admission, then nothing moves', async () => {
    const { time, limiter, start } = setup();
    await limiter.observe(KEY, answer(1, 10));
    await time.run(start(1).all);
    await limiter.observe(KEY, answer(1, 10, { remaining: 0 }));
    expect(limiter.stats().restamped).toBe(0);
    expect(limiter.inWindow(KEY)).toBe(1);
  });
});

describe('slow start until the server has told its count', () => {
  it('when only RateLimit-Policy was seen (a 401), then one request goes, and the first count r sizes the first burst', async () => {
    const { time, limiter, start, at } = setup();
    await limiter.observe(KEY, { status: 401, policy: { name: 'public-api', quota: 10, windowSeconds: 10 } });
    const burst = start(8);
    // The one request is answered at 100 ms: the server's window holds 7 (6 of an earlier run), r = 3.
    const answers = at([[100, () => limiter.observe(KEY, answer(10, 10, { remaining: 3 }))]]);
    await time.run(Promise.all([burst.all, answers]));
    expect(burst.admitted[0]).toBe(0);
    const firstBurst = burst.admitted.slice(1, 4);
    expect(firstBurst.every((t) => t >= 100 && t < 150)).toBe(true);
    // The rest waits for the span: nothing else went before the server's count said it could.
    expect(burst.admitted.slice(4).every((t) => t >= 100 + 10_500)).toBe(true);
    expect(limiter.stats().foreignRequests).toBe(6);
  });

  it('when the first answer is a 429, then after its Retry-After one request goes again before any burst', async () => {
    const { time, limiter, start, at } = setup();
    const burst = start(4);
    const answers = at([
      [
        50,
        () => limiter.observe(KEY, { ...answer(10, 10), status: 429, remaining: 0, retryAfterSeconds: 2 }),
      ],
      [2_300, () => limiter.observe(KEY, answer(10, 10, { remaining: 9 }))],
    ]);
    await time.run(Promise.all([burst.all, answers]));
    expect(burst.admitted[0]).toBe(0);
    expect(burst.admitted[1]).toBeGreaterThanOrEqual(2_050);
    expect(burst.admitted[1]).toBeLessThan(2_300);
    expect(burst.admitted.slice(2).every((t) => t >= 2_300 && t < 2_350)).toBe(true);
  });

  it('when the one request is never answered, then another goes after SLOW_START_PROBE_MS', async () => {
    const { time, limiter, start } = setup();
    await limiter.observe(KEY, { status: 401, policy: { name: 'public-api', quota: 10, windowSeconds: 10 } });
    const burst = start(2);
    await time.run(burst.all);
    expect(burst.admitted).toEqual([0, SLOW_START_PROBE_MS]);
  });
});

describe('waking only as many waiters as there are free slots', () => {
  it('when 40 callers wait on a budget of 5 per 1 s, then one sleeps on a timer at a time and the log is checked at most twice per admission', async () => {
    const time = new VirtualTime();
    const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, marginMs: 250 });
    await limiter.observe(KEY, answer(5, 1));
    const admitted: number[] = [];
    await time.run(
      Promise.all(Array.from({ length: 40 }, () => limiter.acquire(KEY).then(() => admitted.push(time.t)))),
    );
    expect(admitted).toHaveLength(40);
    expect(admitted.slice(35)).toEqual(Array(5).fill(7 * 1_250));
    expect(time.maxPending).toBe(1);
    const { checks, acquired } = limiter.stats();
    expect(acquired).toBe(40);
    // 40 admissions + one refused check per freed batch (7): every waiter checking each time would be hundreds.
    expect(checks).toBe(47);
  });

  it('when a queued caller aborts, then it leaves the line and the ones behind it are still admitted in order', async () => {
    const time = new VirtualTime();
    const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, marginMs: 250 });
    await limiter.observe(KEY, answer(1, 1));
    await time.run(limiter.acquire(KEY));
    const order: string[] = [];
    const controller = new AbortController();
    const head = limiter.acquire(KEY).then(() => order.push('head'));
    const leaving = limiter.acquire(KEY, controller.signal).catch((error) => order.push(`aborted: ${error}`));
    const last = limiter.acquire(KEY).then(() => order.push('last'));
    controller.abort('gone');
    await time.run(Promise.all([head, leaving, last]));
    expect(order).toEqual(['aborted: gone', 'head', 'last']);
    expect(limiter.stats().waiting).toBeUndefined();
  });

  it('when callers queue behind a sleeping one, then the stats count them as waiting', async () => {
    const time = new VirtualTime();
    const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, marginMs: 250 });
    await limiter.observe(KEY, answer(1, 1));
    await time.run(limiter.acquire(KEY));
    const waiting = Promise.all([limiter.acquire(KEY), limiter.acquire(KEY), limiter.acquire(KEY)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(limiter.stats().waiting).toEqual({ calls: 3, resumesAt: time.start + 1_250 });
    await time.run(waiting);
  });
});
