import { setTimeout as delay } from 'node:timers/promises';

/** What the holder of a refresh lock can ask while holding it. */
export interface HeldLock {
  /**
   * Whether the lock is still ours (it was not lost to expiry or broken as stale). Checked right
   * before spending a refresh token: a holder that lost the lock must not send its grant.
   */
  stillHeld(): Promise<boolean>;
}

/**
 * Mutual exclusion for refreshing one set of credentials, across every process that shares them.
 * Adapters: `LocalRefreshLock` (one process), `FileRefreshLock` (processes of one host sharing the
 * credentials file, no Redis needed), `RedisRefreshLock` (any process reaching the same Redis),
 * `CompositeRefreshLock` (several, taken in order).
 */
export interface RefreshLock {
  withLock<T>(fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

const ALWAYS_HELD: HeldLock = { stillHeld: async () => true };

/** In-process mutual exclusion: callers run one after the other, in arrival order. */
export class LocalRefreshLock implements RefreshLock {
  #tail: Promise<unknown> = Promise.resolve();

  async withLock<T>(fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const previous = this.#tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.#tail = previous.then(() => mine);
    try {
      await previous;
      signal?.throwIfAborted();
      return await fn(ALWAYS_HELD);
    } finally {
      release();
    }
  }
}

/** Takes several locks in order (always the same order, so no deadlock) and releases in reverse. */
export class CompositeRefreshLock implements RefreshLock {
  constructor(private readonly locks: readonly RefreshLock[]) {}

  withLock<T>(fn: (held: HeldLock) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const take = (index: number, helds: HeldLock[]): Promise<T> => {
      const lock = this.locks[index];
      if (!lock) {
        return fn({
          stillHeld: async () => (await Promise.all(helds.map((h) => h.stillHeld()))).every(Boolean),
        });
      }
      return lock.withLock((held) => take(index + 1, [...helds, held]), signal);
    };
    return take(0, []);
  }
}

/** Timing of the cross-process locks. */
export interface LockTiming {
  /** A holder that stops renewing loses the lock after this long (a crashed process). Default 30 s. */
  ttlMs?: number;
  /** Waiters retry every `pollMs` (plus jitter). Default 50 ms. */
  pollMs?: number;
  /** A waiter gives up after this long. Default 120 s (a holder may wait for token budget). */
  waitTimeoutMs?: number;
}

export const lockTiming = (t: LockTiming = {}) => ({
  ttlMs: t.ttlMs ?? 30_000,
  pollMs: t.pollMs ?? 50,
  waitTimeoutMs: t.waitTimeoutMs ?? 120_000,
});

/** Sleeps `ms`, rejecting early when `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  delay(ms, undefined, signal ? { signal } : undefined);
