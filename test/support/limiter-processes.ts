import { Redis } from 'ioredis';
import { RedisRateLimiter, type RedisRateLimiterProps } from '../../src/api/rate-limit/redis-limiter.js';
import { VirtualTime } from './virtual-time.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** What a test may set on each limiter; the rest is the processes' own (prefix, clock, connection). */
export type LimiterSettings = Partial<
  Omit<RedisRateLimiterProps, 'redis' | 'prefix' | 'clock' | 'sleep' | 'timeSource'>
>;

/**
 * Rate limiters standing for processes that share a budget through Redis: each on a connection of
 * its own (a process of its own, as far as Redis can tell), all on one virtual clock (their scripts
 * take "now" from it: `timeSource: 'clock'`), so their windows, pauses and pacing take no real time
 * (`time.run`, test/support/virtual-time.ts). `close` closes them, deletes the prefix's keys and
 * quits every connection.
 *
 * @example
 * const processes = new LimiterProcesses(`test-rl-${randomUUID().slice(0, 8)}`, { paceSlices: 0 });
 * const [a, b] = [processes.start(), processes.start()];
 * await processes.time.run(Promise.all([a.acquire(key), b.acquire(key)]));
 */
export class LimiterProcesses {
  readonly time = new VirtualTime();
  /** The test's own connection, to read what the limiters keep in Redis. */
  readonly redis: Redis;
  readonly #connections = new Map<RedisRateLimiter, Redis>();

  constructor(
    readonly prefix: string,
    readonly defaults: LimiterSettings = {},
  ) {
    this.redis = this.time.watch(new Redis(REDIS_URL));
  }

  /** A new process: a limiter on a connection of its own, with `settings` over the defaults. */
  start(settings: LimiterSettings = {}): RedisRateLimiter {
    const redis = this.time.watch(new Redis(REDIS_URL, { maxRetriesPerRequest: 1 }));
    const limiter = new RedisRateLimiter({
      ...this.defaults,
      ...settings,
      redis,
      prefix: this.prefix,
      clock: this.time.clock,
      sleep: this.time.sleep,
      timeSource: 'clock',
    });
    this.#connections.set(limiter, redis);
    return limiter;
  }

  /** The connection of a process, to cut it as a killed process's is. */
  connectionOf(limiter: RedisRateLimiter): Redis {
    const redis = this.#connections.get(limiter);
    if (!redis) throw new Error('not a limiter these processes started');
    return redis;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#connections.keys()].map((l) => l.close()));
    const keys = await this.redis.keys(`${this.prefix}:*`);
    if (keys.length > 0) await this.redis.del(...keys);
    await Promise.all(
      [this.redis, ...this.#connections.values()].map((c) => c.quit().catch(() => undefined)),
    );
  }
}
