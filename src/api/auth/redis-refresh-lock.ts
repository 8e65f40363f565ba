import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RefreshLockTimeoutError } from './auth-errors.js';
import { type HeldLock, type LockTiming, lockTiming, type RefreshLock, sleep } from './refresh-lock.js';

/** Extends the expiry only if the lock still holds our token. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;
/** Deletes the lock only if it still holds our token (never someone else's). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

export interface RedisRefreshLockProps extends LockTiming {
  redis: Redis;
  /** One key per set of credentials, under the caller's prefix, e.g. `rs:auth:refresh-lock:<id>`. */
  key: string;
  random?: () => number;
}

/**
 * A Redis lock: `SET key token NX PX ttl`, renewed every ttl/3 while the holder works, released with
 * a compare-and-delete script. Waiters poll; they then re-read the store, so a waiter finding the
 * tokens already rotated uses them without calling the token endpoint.
 */
export class RedisRefreshLock implements RefreshLock {
  readonly #redis: Redis;
  readonly #key: string;
  readonly #timing: ReturnType<typeof lockTiming>;
  readonly #random: () => number;

  constructor(props: RedisRefreshLockProps) {
    this.#redis = props.redis;
    this.#key = props.key;
    this.#timing = lockTiming(props);
    this.#random = props.random ?? Math.random;
  }

  async withLock<T>(fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const token = randomBytes(16).toString('hex');
    await this.#acquire(token, signal);
    let lost = false;
    const renew = async () => {
      const renewed = await this.#redis.eval(RENEW, 1, this.#key, token, String(this.#timing.ttlMs));
      if (Number(renewed) !== 1) lost = true;
      return !lost;
    };
    const timer = setInterval(
      () => {
        renew().catch(() => {});
      },
      Math.max(10, Math.floor(this.#timing.ttlMs / 3)),
    );
    timer.unref();
    try {
      return await fn({ stillHeld: async () => !lost && (await renew()) });
    } finally {
      clearInterval(timer);
      await this.#redis.eval(RELEASE, 1, this.#key, token).catch(() => {});
    }
  }

  async #acquire(token: string, signal?: AbortSignal): Promise<void> {
    const deadline = performance.now() + this.#timing.waitTimeoutMs;
    for (;;) {
      signal?.throwIfAborted();
      const ok = await this.#redis.set(this.#key, token, 'PX', this.#timing.ttlMs, 'NX');
      if (ok === 'OK') return;
      if (performance.now() >= deadline) {
        throw new RefreshLockTimeoutError(
          `another process held the token refresh lock (${this.#key}) for more than ${this.#timing.waitTimeoutMs} ms`,
        );
      }
      const pollMs = this.#timing.pollMs;
      await sleep(pollMs + Math.floor(this.#random() * pollMs), signal);
    }
  }
}
