import { randomUUID } from 'node:crypto';
import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RefreshLockTimeoutError } from '../../../src/api/auth/auth-errors.js';
import { FileRefreshLock } from '../../../src/api/auth/file-refresh-lock.js';
import { RedisRefreshLock } from '../../../src/api/auth/redis-refresh-lock.js';
import {
  CompositeRefreshLock,
  LocalRefreshLock,
  type RefreshLock,
} from '../../../src/api/auth/refresh-lock.js';
import { tempDir } from './auth-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-auth-locks-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let dir: { dir: string; remove: () => Promise<void> };

beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});
beforeEach(async () => {
  dir = await tempDir();
  return () => dir.remove();
});

/** Runs `n` holders at once, each through its own lock handle; returns the largest overlap seen. */
async function maxOverlap(locks: RefreshLock[]): Promise<number> {
  let inside = 0;
  let max = 0;
  await Promise.all(
    locks.map((lock) =>
      lock.withLock(async () => {
        inside++;
        max = Math.max(max, inside);
        // Simulated work: a holder that stays inside a while gives a broken lock the time to let a
        // second one in. This sleep is the point of the test, not a wait for something.
        await new Promise((r) => setTimeout(r, 15));
        inside--;
      }),
    ),
  );
  return max;
}

const kinds: Record<string, () => RefreshLock> = {
  local: (() => {
    let shared: LocalRefreshLock | undefined;
    return () => (shared ??= new LocalRefreshLock());
  })(),
  redis: () => new RedisRefreshLock({ redis, key: `${PREFIX}:overlap`, pollMs: 5 }),
  file: () => new FileRefreshLock({ path: join(dir.dir, 'overlap.lock'), pollMs: 5 }),
  'file + redis': () =>
    new CompositeRefreshLock([
      new FileRefreshLock({ path: join(dir.dir, 'both.lock'), pollMs: 5 }),
      new RedisRefreshLock({ redis, key: `${PREFIX}:both`, pollMs: 5 }),
    ]),
};

describe.each(Object.keys(kinds))('%s lock', (kind) => {
  it('when 8 handles take it at once, then one holder at a time, and all get it', async () => {
    expect(await maxOverlap(Array.from({ length: 8 }, () => kinds[kind]!()))).toBe(1);
  });

  it('when the holder throws, then the lock is released for the next one', async () => {
    const lock = kinds[kind]!();
    await expect(lock.withLock(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lock.withLock(async (held) => held.stillHeld())).toBe(true);
  });
});

describe('RedisRefreshLock', () => {
  it('when a crashed holder left the key, then the next holder gets it after the time-to-live', async () => {
    const key = `${PREFIX}:crashed`;
    await redis.set(key, 'dead-process', 'PX', 300);
    const started = performance.now();
    await new RedisRefreshLock({ redis, key, pollMs: 10 }).withLock(async () => {});
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('when the key was taken over, then stillHeld is false and release leaves the other holder alone', async () => {
    const key = `${PREFIX}:taken`;
    await new RedisRefreshLock({ redis, key }).withLock(async (held) => {
      await redis.set(key, 'someone-else');
      expect(await held.stillHeld()).toBe(false);
    });
    expect(await redis.get(key)).toBe('someone-else');
  });

  it('when the holder works longer than the time-to-live, then renewal keeps the lock', async () => {
    const key = `${PREFIX}:renewed`;
    await new RedisRefreshLock({ redis, key, ttlMs: 150 }).withLock(async (held) => {
      // Simulated work longer than the time-to-live (Redis expires the key on its own clock):
      // the duration is the point of the test.
      await new Promise((r) => setTimeout(r, 400));
      expect(await held.stillHeld()).toBe(true);
    });
    expect(await redis.exists(key)).toBe(0);
  });

  it('when the lock stays taken past the wait limit, then RefreshLockTimeoutError', async () => {
    const key = `${PREFIX}:timeout`;
    await redis.set(key, 'busy', 'PX', 10_000);
    const waiting = new RedisRefreshLock({ redis, key, pollMs: 10, waitTimeoutMs: 100 }).withLock(
      async () => {},
    );
    await expect(waiting).rejects.toThrow(RefreshLockTimeoutError);
  });
});

describe('FileRefreshLock', () => {
  it('when released, then the lock file is gone; while held it is 0600', async () => {
    const path = join(dir.dir, 'a.lock');
    await new FileRefreshLock({ path }).withLock(async () => {
      expect((await stat(path)).mode & 0o777).toBe(0o600);
    });
    await expect(stat(path)).rejects.toThrow(/ENOENT/);
  });

  it('when a dead process left a lock file untouched for longer than the time-to-live, then it is broken', async () => {
    const path = join(dir.dir, 'stale.lock');
    await writeFile(path, 'dead-process');
    const old = new Date(Date.now() - 60_000);
    await utimes(path, old, old);
    let ran = false;
    await new FileRefreshLock({ path, ttlMs: 1_000, pollMs: 10, waitTimeoutMs: 2_000 }).withLock(async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it('when a live holder keeps touching its lock file, then a waiter does not break it', async () => {
    const path = join(dir.dir, 'live.lock');
    const lock = () => new FileRefreshLock({ path, ttlMs: 150, pollMs: 10 });
    expect(await maxOverlap([lock(), lock()])).toBe(1);
    let overlap = 0;
    let entered!: () => void;
    const holding = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const slow = lock().withLock(async () => {
      overlap++;
      entered();
      // Simulated work for more than 3 time-to-lives: the holder must keep its file fresh meanwhile.
      await new Promise((r) => setTimeout(r, 500));
      overlap--;
    });
    await holding; // the slow holder has the lock: the waiter below must wait, not break it
    await lock().withLock(async () => expect(overlap).toBe(0));
    await slow;
  });

  it('when the lock file was replaced by another holder, then stillHeld is false and release leaves it', async () => {
    const path = join(dir.dir, 'replaced.lock');
    await new FileRefreshLock({ path }).withLock(async (held) => {
      await writeFile(path, 'someone-else');
      expect(await held.stillHeld()).toBe(false);
    });
    expect(await readFile(path, 'utf8')).toBe('someone-else');
  });
});
