import type { Redis } from 'ioredis';
import type { Logger } from 'pino';

/** Sets the TTL of `KEYS[1]` only while it still holds our token. */
const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0`;
/** Deletes `KEYS[1]` only while it still holds our token. */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export interface SourceLockProps {
  redis: Redis;
  /** Key prefix (the queue prefix): `<prefix>:source-lock:<sourceId>`. */
  prefix: string;
  /** The lock expires this long after its holder stops renewing it (a crashed process). */
  ttlMs: number;
  logger: Logger;
}

/** A held source lock. */
export interface SourceLease {
  /**
   * A pass of this source taken by a worker never finished (its process died, or the pass threw):
   * it may have left claimed files behind. Always false for jobs that are not passes.
   */
  readonly previousPassUnfinished: boolean;
  /** `passFinished`: the pass ended normally, so nothing of it is left behind. */
  release(outcome?: { passFinished: boolean }): Promise<void>;
}

/**
 * One job per source at a time, across every worker process: a pass, a failure retry and a record
 * re-sync of the same source never overlap (they write the same records). Deduplication keeps one
 * job of each kind pending per source; this lock serialises the kinds.
 *
 * A pass also leaves a marker (`<prefix>:source-pass:<id>`) that only a normal end removes, so the
 * next pass knows when the one before it was cut short.
 */
export class SourceLock {
  constructor(private readonly props: SourceLockProps) {}

  /** Takes the lock for `owner` (a unique token), or null when another job of the source holds it. */
  async acquire(sourceId: string, owner: string, options: { pass: boolean }): Promise<SourceLease | null> {
    const { redis, ttlMs } = this.props;
    const lockKey = this.#key('source-lock', sourceId);
    const taken = await redis.set(lockKey, owner, 'PX', ttlMs, 'NX');
    if (taken !== 'OK') return null;
    const previous = options.pass ? await redis.getset(this.#key('source-pass', sourceId), owner) : null;
    const renewal = this.#keepAlive(sourceId, lockKey, owner);
    return {
      previousPassUnfinished: previous !== null,
      release: async (outcome = { passFinished: false }) => {
        renewal.stop();
        await redis.eval(RELEASE, 1, lockKey, owner);
        if (options.pass && outcome.passFinished)
          await redis.eval(RELEASE, 1, this.#key('source-pass', sourceId), owner);
      },
    };
  }

  /** Renews the lock every third of its TTL; a lost lock (Redis restarted empty) is taken again. */
  #keepAlive(sourceId: string, lockKey: string, owner: string): { stop(): void } {
    const { redis, ttlMs, logger } = this.props;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    const tick = async () => {
      try {
        const renewed = await redis.eval(RENEW, 1, lockKey, owner, ttlMs);
        if (renewed === 0 && !stopped) {
          const retaken = await redis.set(lockKey, owner, 'PX', ttlMs, 'NX');
          logger[retaken === 'OK' ? 'warn' : 'error'](
            { sourceId },
            retaken === 'OK'
              ? 'source lock was lost and is taken again'
              : 'source lock was lost to another job',
          );
        }
      } catch (error) {
        logger.warn({ sourceId, err: (error as Error).message }, 'cannot renew the source lock');
      }
      if (!stopped) schedule();
    };
    const schedule = () => {
      timer = setTimeout(tick, Math.max(100, Math.floor(ttlMs / 3)));
      timer.unref();
    };
    schedule();
    return {
      stop: () => {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  #key(kind: string, sourceId: string): string {
    return `${this.props.prefix}:${kind}:${sourceId}`;
  }
}
