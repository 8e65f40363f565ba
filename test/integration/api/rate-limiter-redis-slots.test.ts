import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RedisRateLimiter } from '../../../src/api/rate-limit/redis-limiter.js';
import { maxInAnySpan } from '../../support/limiter-worker.js';
import { rateInfo } from '../../support/rate-info.js';
import { VirtualTime } from '../../support/virtual-time.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-rl-slots-${randomUUID().slice(0, 8)}`;

const told = rateInfo;

/** On a virtual clock (`timeSource: 'clock'`, test/support/virtual-time.ts): the waits take no real time. */
describe('RedisRateLimiter: restamp, slow start and one wake per slot (real Redis, one connection per process)', () => {
  const connections: Redis[] = [];
  const time = new VirtualTime();
  let key: string;
  const limiter = (i: number) =>
    new RedisRateLimiter({
      redis: connections[i]!,
      prefix: PREFIX,
      clock: time.clock,
      sleep: time.sleep,
      timeSource: 'clock',
      marginMs: 100,
      // The sliding log's own edges (pacing is tested in rate-limiter-pacing.test.ts).
      paceSlices: 0,
    });

  beforeAll(() => {
    connections.push(...[1, 2, 3].map(() => time.watch(new Redis(REDIS_URL))));
  });
  afterAll(async () => {
    const keys = await connections[0]!.keys(`${PREFIX}:*`);
    if (keys.length > 0) await connections[0]!.del(...keys);
    await Promise.all(connections.map((c) => c.quit()));
  });
  beforeEach(() => {
    key = `k-${randomUUID().slice(0, 8)}`;
  });

  it("when a response is observed 150 ms after its admission, then its log entry moves to the scripts' time of the answer", async () => {
    const a = limiter(0);
    await a.observe(key, told(5, 60));
    await a.acquire(key);
    const log = a.keysOf(key).log;
    const [, admittedAt] = await connections[0]!.zrange(log, '0', '-1', 'WITHSCORES');
    await time.run(time.sleep(150));
    await a.observe(key, told(5, 60, { remaining: 4 }));
    const [, answeredAt] = await connections[0]!.zrange(log, '0', '-1', 'WITHSCORES');
    expect(Number(answeredAt) - Number(admittedAt)).toBeGreaterThanOrEqual(145);
    expect(a.stats()).toMatchObject({ restamped: 1, observeCalls: 2 });
  });

  it('when no process has seen a count yet, then one request goes across processes, and the first count sizes the burst', async () => {
    const [a, b, c] = [limiter(0), limiter(1), limiter(2)];
    await a.observe(key, { status: 401, policy: { name: 'public-api', quota: 10, windowSeconds: 60 } });
    const times: number[] = [];
    await time.run(
      (async () => {
        const pending = [b, c, b, c, b, c].map((l) => l.acquire(key).then(() => times.push(time.t)));
        await time.sleep(300);
        expect(times).toHaveLength(1);
        // The server counts 7 (6 of other processes or an earlier run): r = 3.
        const answered = time.t;
        await a.observe(key, told(10, 60, { remaining: 3 }));
        await time.sleep(300);
        expect(times).toHaveLength(4);
        expect(Math.max(...times) - answered).toBeLessThan(150);
        expect(await connections[0]!.zcard(a.keysOf(key).log)).toBe(10);
        await Promise.all([b.close(), c.close()]);
        await Promise.allSettled(pending);
      })(),
    );
  });

  it('when a default policy is configured (the token endpoint), then there is no slow start: it bounds the first burst', async () => {
    const withDefault = new RedisRateLimiter({
      redis: connections[0]!,
      prefix: PREFIX,
      clock: time.clock,
      sleep: time.sleep,
      timeSource: 'clock',
      marginMs: 100,
      defaultPolicy: { quota: 3, windowSeconds: 60 },
    });
    const started = time.t;
    await time.run(Promise.all([1, 2, 3].map(() => withDefault.acquire(key))));
    expect(time.t - started).toBeLessThan(300);
    const fourth = withDefault.acquire(key, time.timeout(300));
    await expect(time.run(fourth)).rejects.toMatchObject({ name: 'TimeoutError' });
  });

  it('when 2 processes × 10 callers wait on q=5 w=1 s, then each freed slot costs about one check, not one per waiter', async () => {
    const [a, b] = [limiter(0), limiter(1)];
    await a.observe(key, told(5, 1));
    await time.run(Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? b : a).acquire(key))));
    // Admission times as Redis logged them (no response observed, so none was restamped).
    const logged = await connections[0]!.zrange(a.keysOf(key).log, '0', '-1', 'WITHSCORES');
    const admitted = logged.filter((_, i) => i % 2 === 1).map(Number);
    expect(admitted).toHaveLength(20);
    expect(maxInAnySpan(admitted, 1_100)).toBeLessThanOrEqual(5);
    const checks = (a.stats().checks ?? 0) + (b.stats().checks ?? 0);
    // 20 admissions, plus about one refused check per process and freed batch.
    expect(checks / 20).toBeLessThanOrEqual(2);
  });
});
