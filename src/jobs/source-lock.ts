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
  /**
   * The token of the job that holds the lock now, once a renewal found it taken by another job (a
   * job started after the lock was lost: Redis restarted without persistence, or out of reach for
   * longer than the TTL); null while the lock is this job's. A job that lost its lock stops before
   * its next batch (see `pass-fence.ts`); the renewals stop with it.
   */
  readonly lostTo: string | null;
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
 *
 * Redis may lose the lock while its job runs (a restart without persistence): the lock alone does
 * not keep a second pass out then. The state DB, which survives, does: the processor starts no job
 * while a pass of the source is live there, and a pass stops before its next batch when its lock is
 * another job's or a later pass of its source started (`pass-fence.ts`).
 */
export class SourceLock {
  constructor(private readonly props: SourceLockProps) {}

  /** Takes the lock for `owner` (a unique token), or null when another job of the source holds it. */
  async acquire(sourceId: string, owner: string, options: { pass: boolean }): Promise<SourceLease | null> {
    const { redis, ttlMs } = this.props;
    const lockKey = this.#key('source-lock', sourceId);
    const taken = await redis.set(lockKey, owner, 'PX', ttlMs, 'NX');
    if (taken !== 'OK') return null;
    const passKey = options.pass ? this.#key('source-pass', sourceId) : null;
    const previous = passKey ? await redis.getset(passKey, owner) : null;
    const renewal = this.#keepAlive(sourceId, lockKey, owner, passKey);
    return {
      previousPassUnfinished: previous !== null,
      get lostTo() {
        return renewal.lostTo;
      },
      release: async (outcome = { passFinished: false }) => {
        renewal.stop();
        await redis.eval(RELEASE, 1, lockKey, owner);
        if (passKey && outcome.passFinished) await redis.eval(RELEASE, 1, passKey, owner);
      },
    };
  }

  /** The token of the job holding the source's lock, or null when nobody holds it. */
  holder(sourceId: string): Promise<string | null> {
    return this.props.redis.get(this.#key('source-lock', sourceId));
  }

  /**
   * Renews the lock every third of its TTL. A lock found gone (Redis restarted without persistence,
   * or the key expired while Redis was out of reach) is taken again, with the pass marker: no other
   * job can have started meanwhile, since a job starts only when the state DB shows no live pass of
   * its source (`sync-processor.ts`), and one that did would hold the lock. A lock found another
   * job's is that job's: `lostTo` says so, and the renewals stop.
   */
  #keepAlive(
    sourceId: string,
    lockKey: string,
    owner: string,
    passKey: string | null,
  ): { stop(): void; readonly lostTo: string | null } {
    const { redis, ttlMs, logger } = this.props;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    let lostTo: string | null = null;
    const takeBack = async () => {
      if ((await redis.set(lockKey, owner, 'PX', ttlMs, 'NX')) === 'OK') {
        // Released while this renewal was under way: not taken again past the release.
        if (stopped) {
          await redis.eval(RELEASE, 1, lockKey, owner);
          return;
        }
        if (passKey) await redis.set(passKey, owner, 'NX');
        logger.warn(
          { sourceId, event: 'source-lock.retaken' },
          'source lock was lost (Redis restarted or out of reach) and is taken again',
        );
        return;
      }
      const holder = await redis.get(lockKey);
      // Let go of meanwhile: taken again at the next renewal.
      if (holder === null || holder === owner || stopped) return;
      lostTo = holder;
      logger.error(
        { sourceId, event: 'source-lock.lost', holder },
        'source lock was lost to another job: this job stops before its next batch',
      );
    };
    const tick = async () => {
      try {
        const renewed = await redis.eval(RENEW, 1, lockKey, owner, ttlMs);
        if (renewed === 0 && !stopped) await takeBack();
      } catch (error) {
        logger.warn({ sourceId, err: (error as Error).message }, 'cannot renew the source lock');
      }
      if (!stopped && lostTo === null) schedule();
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
      get lostTo() {
        return lostTo;
      },
    };
  }

  #key(kind: string, sourceId: string): string {
    return `${this.props.prefix}:${kind}:${sourceId}`;
  }
}
