import { type Selectable, sql } from 'kysely';
import type { RunStatus } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import { lockKey, RunLockSession, trackingOf } from './run-locks.js';
import type { RunsTable } from './schema.js';
import { type StateScopes, scopeColumns, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

export type { RunStatus };

export interface RunRow {
  id: string;
  sourceId: string;
  /** The connection and organization the pass synced into (see `state/scopes.ts`). */
  connectionId: string;
  /** '' for runs before the organization was stamped. */
  organizationId: string;
  trigger: string;
  status: RunStatus;
  dryRun: boolean;
  counts: Record<string, unknown>;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

/** The `error` of a run closed by a graceful shutdown that could not wait for its pass. */
export const RUN_SHUT_DOWN = 'shut down';
/** The `error` of a run whose process ended without closing it (SIGKILL, a crash, a lost machine). */
export const RUN_PROCESS_GONE = 'its process ended before the pass finished (killed or crashed)';

/**
 * One row per pass of one source, with its counts.
 *
 * A run never stays `running` once its pass is over: the pass finishes it (`succeeded`, `partial`,
 * `failed`); a graceful shutdown that cannot wait for the pass closes it as `interrupted` with the
 * error `shut down` (`interruptInProgress`); and when its process was killed, the next pass of its
 * source (or the next process opening the sync runtime) finds it `running` with nobody holding its
 * lock and closes it as `interrupted` (`interruptAbandoned`). The locks are taken once the
 * composition root calls `holdRunLocks()` (and released by `releaseRunLocks()` before the DB closes).
 *
 * A run records its source's scope (see `state/scopes.ts`); the reads here span every scope.
 *
 * What a lost connection does to each statement (see `StateCalls`): `retried` are the reads, the
 * statements that set what they set again (`finish`, `addToCounts` and `requestCancel` merge or
 * write values fixed before the first attempt; `interruptAbandoned` and `interruptInProgress` close
 * only runs still `running`, so the ids they return, which are logged, may miss those an attempt
 * whose answer was lost closed), the source's row (`on conflict do nothing`), the id a run takes from
 * its sequence (an attempt again costs a number, nothing else) and the insert of a run under that
 * id (`on conflict do nothing`). Run `once`: the insert of a run that takes its id from the table's
 * default, where no run locks are held (the runtimes always hold them): an attempt again after one
 * that took effect would leave a second run `running`.
 */
export class RunsRepository {
  /** `calls`: how statements run (default `StateCalls.direct`; `syncStateRepos` passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  /**
   * From now on, every run this process starts on this state DB holds a session advisory lock
   * while it is in progress, and each start first closes the source's abandoned runs. Call
   * `releaseRunLocks()` before closing the DB.
   */
  holdRunLocks(): void {
    const of = trackingOf(this.db);
    of.locks ??= new RunLockSession(this.db);
  }

  /** Gives up the locks (the connection that holds them goes back to the pool). */
  async releaseRunLocks(): Promise<void> {
    const of = trackingOf(this.db);
    const locks = of.locks;
    of.locks = null;
    await locks?.close();
  }

  async start(sourceId: string, trigger: string, dryRun: boolean): Promise<string> {
    await this.calls.retried('runs.addSource', () =>
      this.db
        .insertInto('sources')
        .values({ id: sourceId, type: 'unknown' })
        .onConflict((oc) => oc.doNothing())
        .execute(),
    );
    const { inProgress, locks } = trackingOf(this.db);
    const row = {
      ...scopeColumns(this.scopes, sourceId),
      trigger,
      status: 'running' as const,
      dry_run: dryRun,
      counts: '{}',
      error: null,
    };
    if (!locks) {
      const { id } = await this.calls.once('runs.insert', () =>
        this.db.insertInto('runs').values(row).returning('id').executeTakeFirstOrThrow(),
      );
      inProgress.add(String(id));
      return String(id);
    }
    await this.interruptAbandoned(sourceId);
    // The lock is taken before the row exists: no other process ever sees this run unlocked.
    const { rows } = await this.calls.retried('runs.nextId', () =>
      sql<{ id: string }>`select nextval(pg_get_serial_sequence('runs', 'id'))::text as id`.execute(this.db),
    );
    const id = rows[0]!.id;
    // Without its lock (the connection holding them was lost), the run still runs; another process
    // may then take it for abandoned, and its finish writes the real outcome over that.
    await locks.lock(id).catch(() => false);
    try {
      await this.calls.retried('runs.insertNumbered', () =>
        this.db
          .insertInto('runs')
          .values({ id, ...row })
          .onConflict((oc) => oc.column('id').doNothing())
          .execute(),
      );
    } catch (error) {
      await locks.unlock(id).catch(() => undefined);
      throw error;
    }
    inProgress.add(id);
    return id;
  }

  async finish(
    id: string,
    status: RunStatus,
    counts: Record<string, unknown>,
    error: string | null = null,
  ): Promise<void> {
    const values = { status, counts: JSON.stringify(counts), error, finished_at: new Date() };
    try {
      await this.calls.retried('runs.finish', () =>
        this.db.updateTable('runs').set(values).where('id', '=', id).execute(),
      );
    } finally {
      await this.#forget(id);
    }
  }

  /** Adds these keys to the run's counts, over what they held (`jsonb ||`). */
  async addToCounts(id: string, facts: Record<string, unknown>): Promise<void> {
    const merged = JSON.stringify(facts);
    await this.calls.retried('runs.addToCounts', () =>
      this.db
        .updateTable('runs')
        .set({ counts: sql<Record<string, unknown>>`counts || ${merged}::jsonb` })
        .where('id', '=', id)
        .execute(),
    );
  }

  /**
   * Asks the pass of this run to stop before its next batch (the dashboard's Cancel): kept in the
   * run's counts (`cancel`), which its pass reads before each batch (`cancelRequest`) and replaces
   * with its own when it closes the run as `cancelled`. False when the run is not `running`.
   */
  async requestCancel(id: string, by: string): Promise<boolean> {
    if (!/^\d{1,18}$/.test(id)) return false;
    const cancel = JSON.stringify({ cancel: { by, at: new Date().toISOString() } });
    // An attempt again merges the same request, and still finds the run `running`.
    const result = await this.calls.retried('runs.requestCancel', () =>
      this.db
        .updateTable('runs')
        .set({ counts: sql<Record<string, unknown>>`counts || ${cancel}::jsonb` })
        .where('id', '=', id)
        .where('status', '=', 'running')
        .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows) > 0;
  }

  /** Who asked to cancel this run (`requestCancel`), or null: one read on the primary key. */
  async cancelRequest(id: string): Promise<string | null> {
    const row = await this.calls.retried('runs.cancelRequest', () =>
      this.db
        .selectFrom('runs')
        .select(sql<string | null>`counts->'cancel'->>'by'`.as('by'))
        .where('id', '=', id)
        .executeTakeFirst(),
    );
    return row?.by ?? null;
  }

  /**
   * Closes as `interrupted` the `running` runs (of one source, or all) whose process is gone:
   * nobody holds their lock. Runs of this process are never touched. Returns their ids.
   * Runs only once `holdRunLocks()` was called (a process that holds no lock of its own cannot
   * tell its runs from dead ones).
   */
  async interruptAbandoned(sourceId?: string): Promise<string[]> {
    const { inProgress, locks } = trackingOf(this.db);
    if (!locks) return [];
    let query = this.db.selectFrom('runs').select('id').where('status', '=', 'running');
    if (sourceId !== undefined) query = query.where('source_id', '=', sourceId);
    const running = await this.calls.retried('runs.running', () => query.execute());
    const candidates = running.map((r) => String(r.id)).filter((id) => !inProgress.has(id));
    const interrupted: string[] = [];
    for (const id of candidates) {
      // The lock is tried for this one run and released with the statement: free means nobody
      // holds it, so its process is gone (a live one holds it from before its row existed).
      const result = await this.calls.retried('runs.interruptAbandoned', () =>
        this.db
          .updateTable('runs')
          .set({ status: 'interrupted', error: RUN_PROCESS_GONE, finished_at: new Date() })
          .where('id', '=', id)
          .where('status', '=', 'running')
          .where(sql<boolean>`pg_try_advisory_xact_lock(${lockKey(id)})`)
          .executeTakeFirst(),
      );
      if (Number(result.numUpdatedRows) > 0) interrupted.push(id);
    }
    return interrupted;
  }

  /**
   * Closes as `interrupted` (error `reason`, default `shut down`) every run this process started
   * and has not finished: a shutdown that cannot wait for its passes. A pass that still finishes
   * afterwards overwrites it with its real outcome. Returns their ids.
   */
  async interruptInProgress(reason: string = RUN_SHUT_DOWN): Promise<string[]> {
    const { inProgress } = trackingOf(this.db);
    const ids = [...inProgress];
    if (ids.length === 0) return [];
    try {
      const rows = await this.calls.retried('runs.interruptInProgress', () =>
        this.db
          .updateTable('runs')
          .set({ status: 'interrupted', error: reason, finished_at: new Date() })
          .where('id', 'in', ids)
          .where('status', '=', 'running')
          .returning('id')
          .execute(),
      );
      return rows.map((r) => String(r.id));
    } finally {
      for (const id of ids) await this.#forget(id);
    }
  }

  async recent(sourceId?: string, limit = 20): Promise<RunRow[]> {
    let query = this.db.selectFrom('runs').selectAll();
    if (sourceId) query = query.where('source_id', '=', sourceId);
    const rows = await this.calls.retried('runs.recent', () =>
      query.orderBy('id', 'desc').limit(limit).execute(),
    );
    return rows.map(toRunRow);
  }

  /** The run is no longer this process's: its lock is given up (after its row was written). */
  async #forget(id: string): Promise<void> {
    const { inProgress, locks } = trackingOf(this.db);
    if (!inProgress.delete(id)) return;
    await locks?.unlock(id).catch(() => undefined);
  }
}

/**
 * Which of these `running` runs have no live process behind them (killed, crashed): read-only, for
 * the dashboard to show them as stale until a pass of their source (or a process opening the sync
 * runtime) closes them as `interrupted`. Over Postgres: nobody holds the run's lock (tried and let
 * go within the statement); over the embedded DB (one process): the run is not this process's.
 */
export async function staleRunIds(db: StateDb, ids: readonly string[]): Promise<Set<string>> {
  const { inProgress } = trackingOf(db);
  const candidates = ids.filter((id) => /^\d{1,18}$/.test(id) && !inProgress.has(id));
  if (candidates.length === 0) return new Set();
  if (db.getExecutor().adapter.supportsMultipleConnections === false) {
    const rows = await db
      .selectFrom('runs')
      .select('id')
      .where('id', 'in', candidates)
      .where('status', '=', 'running')
      .execute();
    return new Set(rows.map((r) => String(r.id)));
  }
  const stale = new Set<string>();
  for (const id of candidates) {
    const row = await db
      .selectFrom('runs')
      .select('id')
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where(sql<boolean>`pg_try_advisory_xact_lock(${lockKey(id)})`)
      .executeTakeFirst();
    if (row) stale.add(id);
  }
  return stale;
}

/** A `runs` row as the application sees it. */
export const toRunRow = (r: Selectable<RunsTable>): RunRow => ({
  id: String(r.id),
  sourceId: r.source_id,
  connectionId: r.connection_id,
  organizationId: r.organization_id,
  trigger: r.trigger,
  status: r.status,
  dryRun: r.dry_run,
  counts: r.counts,
  error: r.error,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});
