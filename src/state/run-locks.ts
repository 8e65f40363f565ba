/**
 * What makes a run's liveness visible across processes: a Postgres session advisory lock per run in
 * progress, held by one connection of the process, and what this process knows of the runs it
 * started on each state DB (shared by every `RunsRepository` over it).
 */
import { sql } from 'kysely';
import type { StateDb } from './database.js';

/**
 * The advisory lock of a run: a key space per state DB schema (schemas can share a database), the
 * run id. Two int4 keys, so they never meet the single-bigint locks of the migrator.
 */
const LOCK_SPACE = sql`hashtext(${'receivables-sync.runs.'} || current_schema())`;
export const lockKey = (id: string) => sql`${LOCK_SPACE}, (${id}::bigint % 2147483647)::int`;

/**
 * One connection of the process holding a Postgres session advisory lock per run in progress: the
 * lock says "the process running this run is alive". Postgres releases a session's locks when the
 * session ends, so a process that is killed (or loses its machine) leaves its runs unlocked at
 * once. The connection is checked out of the pool while at least one run is held, and given back,
 * its locks released, when none is.
 *
 * A state DB of one connection (the embedded one) serves one process: there, no lock is held, and
 * a run that is not this process's is dead.
 */
export class RunLockSession {
  /** The locks this session holds (the runs that got theirs). */
  readonly #locked = new Set<string>();
  readonly #oneProcess: boolean;
  #connection: Promise<StateDb> | null = null;
  #end: (() => void) | null = null;
  #chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly db: StateDb) {
    this.#oneProcess = db.getExecutor().adapter.supportsMultipleConnections === false;
  }

  /** Takes the lock of `id` (false: another session holds it, which only a key collision can do). */
  lock(id: string): Promise<boolean> {
    if (this.#oneProcess) return Promise.resolve(true);
    return this.#serial(async () => {
      const conn = await this.#open();
      const { rows } = await sql<{
        locked: boolean;
      }>`select pg_try_advisory_lock(${lockKey(id)}) as locked`.execute(conn);
      const locked = rows[0]?.locked === true;
      if (locked) this.#locked.add(id);
      return locked;
    });
  }

  /** Gives up the lock of `id`; the connection goes back to the pool with the last one. */
  unlock(id: string): Promise<void> {
    if (this.#oneProcess) return Promise.resolve();
    return this.#serial(async () => {
      if (!this.#locked.delete(id) || !this.#connection) return;
      const conn = await this.#connection;
      await sql`select pg_advisory_unlock(${lockKey(id)})`.execute(conn);
      if (this.#locked.size === 0) await this.#close();
    });
  }

  /** Gives up every lock (before the state DB closes: a checked-out connection would hold its pool open). */
  close(): Promise<void> {
    if (this.#oneProcess) return Promise.resolve();
    return this.#serial(() => this.#close());
  }

  /** Operations run one at a time; a failed one (a lost connection) drops the session and its locks. */
  #serial<T>(operation: () => Promise<T>): Promise<T> {
    const result = this.#chain.then(operation).catch(async (error: unknown) => {
      await this.#close();
      throw error;
    });
    this.#chain = result.catch(() => undefined);
    return result;
  }

  #open(): Promise<StateDb> {
    this.#connection ??= new Promise<StateDb>((resolve, reject) => {
      const ended = new Promise<void>((end) => {
        this.#end = end;
      });
      this.db
        .connection()
        .execute(async (conn) => {
          resolve(conn);
          await ended;
        })
        .catch((error: unknown) => {
          this.#connection = null;
          reject(error);
        });
    });
    return this.#connection;
  }

  /**
   * Releases every lock of the session, then gives the connection back to the pool (where the
   * session lives on: its locks must not).
   */
  async #close(): Promise<void> {
    this.#locked.clear();
    const connection = this.#connection;
    const end = this.#end;
    this.#connection = null;
    this.#end = null;
    if (!connection) return;
    try {
      await sql`select pg_advisory_unlock_all()`.execute(await connection);
    } catch {
      // The connection is lost, and its session with it: nothing is left locked.
    } finally {
      end?.();
    }
  }
}

/** What this process knows of the runs it started, per state DB (every repository over it shares it). */
interface RunTracking {
  /** Runs started here and not finished. */
  inProgress: Set<string>;
  /** Set by `holdRunLocks()`: the runs in progress hold a lock that proves their process alive. */
  locks: RunLockSession | null;
}

const tracking = new WeakMap<StateDb, RunTracking>();

export function trackingOf(db: StateDb): RunTracking {
  let of = tracking.get(db);
  if (!of) {
    of = { inProgress: new Set(), locks: null };
    tracking.set(db, of);
  }
  return of;
}
