import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TokenBucketRateLimiter } from '../../../bench/limiter-token-bucket.js';
import { LOOKBACK_MAX_MS, UNKNOWN_POLICY_POLL_MS } from '../../../src/api/rate-limit/policy.js';
import { RedisRateLimiter } from '../../../src/api/rate-limit/redis-limiter.js';
import { timerSleep } from '../../../src/api/rate-limit/sleep.js';
import type { MeteredRateLimiter, Sleep } from '../../../src/api/rate-limit/types.js';
import { ManualClock, systemClock } from '../../../src/domain/clock.js';
import { maxInAnySpan } from '../../support/limiter-worker.js';
import { rateInfo } from '../../support/rate-info.js';
import { VirtualTime } from '../../support/virtual-time.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-rl-redis-${randomUUID().slice(0, 8)}`;

const policy = rateInfo;

/**
 * Two connections stand for two processes. The scripts take "now" from a virtual clock
 * (`timeSource: 'clock'`, test/support/virtual-time.ts), so a window passes in milliseconds; the
 * last test runs on Redis `TIME`, as production does.
 */
describe('RedisRateLimiter (real Redis, two connections standing for two processes)', () => {
  const connections: Redis[] = [];
  const time = new VirtualTime();
  let a: RedisRateLimiter;
  let b: RedisRateLimiter;
  let key: string;

  const limiter = (redis: Redis, sleep: Sleep = time.sleep) =>
    new RedisRateLimiter({
      redis,
      prefix: PREFIX,
      clock: time.clock,
      sleep,
      timeSource: 'clock',
      marginMs: 100,
    });

  /** The virtual sleep, counting its callers, so a test can tell the limiter waited. */
  const countedSleep = () => {
    const counted = {
      waits: 0,
      sleep: ((ms, signal) => {
        counted.waits++;
        return time.sleep(ms, signal);
      }) as Sleep,
    };
    return counted;
  };

  beforeAll(() => {
    connections.push(time.watch(new Redis(REDIS_URL)), time.watch(new Redis(REDIS_URL)));
    a = limiter(connections[0]!);
    b = limiter(connections[1]!);
  });
  afterAll(async () => {
    const keys = await connections[0]!.keys(`${PREFIX}:*`);
    if (keys.length > 0) await connections[0]!.del(...keys);
    await Promise.all(connections.map((c) => c.quit()));
  });
  // A fresh budget per test, so tests do not share logs or pauses.
  beforeEach(() => {
    key = `k-${randomUUID().slice(0, 8)}`;
  });

  /** Acquires `n` times concurrently over `limiters`; returns the admission times (ms, virtual). */
  const burst = async (n: number, limiters: MeteredRateLimiter[] = [a, b]) => {
    const times: number[] = [];
    await time.run(
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          limiters[i % limiters.length]!.acquire(key).then(() => times.push(time.t)),
        ),
      ),
    );
    return times.sort((x, y) => x - y);
  };

  it('when two processes burst 12 requests on q=5 w=1 s, then 5 go at once and each next 5 wait for the w + margin span', async () => {
    await a.observe(key, policy(5, 1));
    const started = time.t;
    const times = await burst(12);
    expect(maxInAnySpan(times, 1_100)).toBe(5);
    expect(times[4]! - started).toBeLessThan(100);
    expect(times[5]! - times[0]!).toBeGreaterThanOrEqual(1_090);
    expect(times[10]! - times[0]!).toBeGreaterThanOrEqual(2_190);
    expect(times[11]! - started).toBeLessThan(2_600);
  });

  it('when one process learns the policy, then the other uses it without having seen a response', async () => {
    await a.observe(key, policy(6, 60));
    const started = time.t;
    await burst(6, [b]);
    expect(time.t - started).toBeLessThan(200);
  });

  it('when no process knows the policy yet, then one probe request goes and the others go within ~50 ms of the first answer', async () => {
    const times: number[] = [];
    // Four processes, each with its own limiter, so each one's waits can be counted.
    const sleeps = Array.from({ length: 4 }, countedSleep);
    await time.run(
      (async () => {
        const pending = sleeps.map((s) =>
          limiter(connections[1]!, s.sleep)
            .acquire(key)
            .then(() => times.push(time.t)),
        );
        // The three that did not get the probe have each waited and asked again, at least once.
        await time.sleep(2 * UNKNOWN_POLICY_POLL_MS + 20);
        expect(sleeps.filter((s) => s.waits >= 2)).toHaveLength(3);
        expect(times).toHaveLength(1);
        const answered = time.t;
        await a.observe(key, policy(10, 60));
        await Promise.all(pending);
        expect(Math.max(...times) - answered).toBeLessThanOrEqual(UNKNOWN_POLICY_POLL_MS);
      })(),
    );
  });

  it('when one process observes a 429 with Retry-After 1, then the other waits about 1 s', async () => {
    await a.observe(key, policy(100, 60));
    const rateLimitedBefore = a.stats().rateLimited;
    const pausesBefore = a.stats().pauses;
    await a.observe(key, { status: 429, retryAfterSeconds: 1, remaining: 0, resetSeconds: 1 });
    const waited = await time.run(b.acquire(key));
    expect(waited).toBeGreaterThanOrEqual(950);
    expect(waited).toBeLessThan(1_300);
    expect(a.stats().rateLimited - rateLimitedBefore).toBe(1);
    expect(a.stats().pauses - pausesBefore).toBe(1);
  });

  it('when a process waits out a pause another one set, then its stats say it waits and when it resumes, then how long it was held', async () => {
    const c = limiter(connections[1]!);
    await a.observe(key, policy(100, 60));
    await a.observe(key, { status: 429, retryAfterSeconds: 1 });
    await time.run(
      (async () => {
        const started = time.clock.now().getTime();
        const waiting = c.acquire(key);
        await time.settle();
        const now = c.stats().waiting;
        expect(now?.calls).toBe(1);
        expect(now!.resumesAt - started).toBeGreaterThan(800);
        expect(now!.resumesAt - started).toBeLessThan(1_300);
        await waiting;
      })(),
    );
    expect(c.stats().waiting).toBeUndefined();
    expect(c.stats().heldMs).toBeGreaterThanOrEqual(800);
    await c.close();
  });

  it('when RateLimit shows other clients on the token, then their requests join the shared log and r=0 pauses every process for t', async () => {
    const foreignBefore = a.stats().foreignRequests + b.stats().foreignRequests;
    await a.observe(key, policy(10, 60));
    await burst(2);
    await a.observe(key, policy(10, 60, { remaining: 5, resetSeconds: 60 }));
    const redis = connections[0]!;
    expect(await redis.zcard(a.keysOf(key).log)).toBe(5);
    await b.observe(key, policy(10, 60, { remaining: 0, resetSeconds: 2 }));
    expect(await redis.zcard(a.keysOf(key).log)).toBe(10);
    const pauseTtl = await redis.pttl(a.keysOf(key).pause);
    expect(pauseTtl).toBeGreaterThan(1_500);
    expect(pauseTtl).toBeLessThanOrEqual(2_000);
    expect(a.stats().foreignRequests + b.stats().foreignRequests - foreignBefore).toBeGreaterThanOrEqual(8);
  });

  it('when RateLimit is fully explained by our own requests, then nothing is added', async () => {
    await a.observe(key, policy(10, 60));
    await burst(4);
    await b.observe(key, policy(10, 60, { remaining: 6, resetSeconds: 60, elapsedMs: 20 }));
    expect(await connections[0]!.zcard(a.keysOf(key).log)).toBe(4);
  });

  it('when budgets are written, then every key expires on its own (no cleanup needed in production)', async () => {
    await a.observe(key, policy(5, 2, { status: 409, retryAfterSeconds: 1 }));
    expect(await time.run(a.acquire(key))).toBeGreaterThanOrEqual(900); // waits out the 409's Retry-After
    const redis = connections[0]!;
    const keys = a.keysOf(key);
    expect(await redis.pttl(keys.log)).toBeGreaterThan(0);
    expect(await redis.pttl(keys.log)).toBeLessThanOrEqual(2_100 + LOOKBACK_MAX_MS);
    expect(await redis.pttl(keys.policy)).toBeGreaterThan(0);
  });

  it("when the bench's token bucket runs with q=5 w=1 s, then requests are spaced by (w + margin) / (q - 1)", async () => {
    const bucket = (redis: Redis) =>
      new TokenBucketRateLimiter({
        redis,
        prefix: PREFIX,
        clock: time.clock,
        sleep: time.sleep,
        timeSource: 'clock',
        marginMs: 100,
      });
    const [bucketA, bucketB] = [bucket(connections[0]!), bucket(connections[1]!)];
    await bucketA.observe(key, policy(5, 1));
    const times = await burst(6, [bucketA, bucketB]);
    expect(maxInAnySpan(times, 1_100)).toBeLessThanOrEqual(5);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(265);
  });

  it('when the signal aborts or the limiter closes during a wait, then acquire rejects', async () => {
    const counted = countedSleep();
    const c = limiter(connections[1]!, counted.sleep);
    await a.observe(key, { status: 429, retryAfterSeconds: 30 });
    await time.run(
      (async () => {
        await expect(c.acquire(key, time.timeout(50))).rejects.toMatchObject({ name: 'TimeoutError' });
        const waiting = c.acquire(key);
        await time.settle();
        expect(counted.waits).toBe(2); // the second acquire waits out the pause
        await c.close();
        await expect(waiting).rejects.toMatchObject({ code: 'RATE_LIMITER_CLOSED' });
      })(),
    );
  });

  it('(real time, Redis TIME) when two processes whose own clocks are an hour apart share a budget, then they agree on its window through Redis TIME', async () => {
    // Production: no `timeSource`, so the scripts read Redis TIME. The processes' own clocks only
    // measure their waits: one of them is an hour ahead, and the window is still one window.
    const onRedisTime = (redis: Redis, clock = systemClock) =>
      new RedisRateLimiter({ redis, prefix: PREFIX, clock, sleep: timerSleep, marginMs: 100 });
    const [p, q] = [
      onRedisTime(connections[0]!),
      onRedisTime(connections[1]!, new ManualClock(Date.now() + 3_600_000)),
    ];
    await p.observe(key, policy(3, 0.4));
    const started = Date.now();
    const times: number[] = [];
    await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? q : p).acquire(key).then(() => times.push(Date.now()))),
    );
    times.sort((x, y) => x - y);
    expect(maxInAnySpan(times, 500)).toBe(3);
    expect(times[2]! - started).toBeLessThan(100);
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(490);
    expect(times[5]! - started).toBeLessThan(900);
  });
});
