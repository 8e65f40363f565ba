import { sql } from 'kysely';
import { FILE_FAILURE_STAGE } from '../domain/sync-state.js';
import type { StateDb } from './database.js';

/** Why a source is paused, by whom and since when (null fields: paused before these were kept). */
export interface SourcePause {
  /** `auto`: after `alerts.pauseAfterFailedRuns` failed runs; `user`: the dashboard's Pause. */
  by: 'auto' | 'user';
  reason: string | null;
  at: Date | null;
}

/** The failed runs that end a source's history, since its last resume. */
export interface FailedRunStreak {
  count: number;
  /** The error of the latest of them. */
  lastError: string | null;
}

/** Run statuses of a pass that ended (interrupted and running ones neither break nor extend a streak). */
const ENDED = ['succeeded', 'partial', 'failed'] as const;

/**
 * The `paused` flag of each source (the `sources` table), with its reason. A paused source is not
 * synced by the worker (schedules, drop-folder polling, queued jobs) and the dashboard refuses its
 * actions until it is resumed. A source is paused by a user (the dashboard) or automatically after
 * consecutive failed runs (`pauseAutomatically`, which the alerts' pass watch calls).
 */
export class PausedSources {
  constructor(private readonly db: StateDb) {}

  /** The paused sources, each with why (a `Map`: `has(id)` says whether one is paused). */
  async list(): Promise<Map<string, SourcePause>> {
    const rows = await this.db
      .selectFrom('sources')
      .select(['id', 'paused_by', 'pause_reason', 'paused_at'])
      .where('paused', '=', true)
      .execute();
    return new Map(rows.map((r) => [r.id, pauseOf(r)]));
  }

  async isPaused(sourceId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('sources')
      .select('paused')
      .where('id', '=', sourceId)
      .executeTakeFirst();
    return row?.paused ?? false;
  }

  /**
   * Sets the flag, creating the source's row when no run created it yet. Pausing records who did
   * it (default `user`) and why; resuming clears that and starts the count of failed runs anew.
   */
  async set(
    sourceId: string,
    type: string,
    paused: boolean,
    why: { by?: 'auto' | 'user'; reason?: string | null } = {},
  ): Promise<void> {
    const now = new Date();
    const fields = paused
      ? { paused, pause_reason: why.reason ?? null, paused_at: now, paused_by: why.by ?? 'user' }
      : { paused, pause_reason: null, paused_at: null, paused_by: null, resumed_at: now };
    await this.db
      .insertInto('sources')
      .values({ id: sourceId, type, created_at: now, updated_at: now, ...fields })
      .onConflict((oc) => oc.column('id').doUpdateSet({ ...fields, updated_at: now }))
      .execute();
  }

  /**
   * Pauses a source that is not paused yet, as `auto` with `reason`. True when this call paused
   * it (false: it was paused already, or has no row), so one pause is announced once.
   */
  async pauseAutomatically(sourceId: string, reason: string): Promise<boolean> {
    const now = new Date();
    const result = await this.db
      .updateTable('sources')
      .set({ paused: true, pause_reason: reason, paused_at: now, paused_by: 'auto', updated_at: now })
      .where('id', '=', sourceId)
      .where('paused', '=', false)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The consecutive `failed` runs ending the source's history since its last resume, counted up to `max`. */
  async failedRunStreak(sourceId: string, max: number): Promise<FailedRunStreak> {
    const source = await this.db
      .selectFrom('sources')
      .select('resumed_at')
      .where('id', '=', sourceId)
      .executeTakeFirst();
    let query = this.db
      .selectFrom('runs')
      .select(['status', 'error'])
      .where('source_id', '=', sourceId)
      .where('dry_run', '=', false)
      .where('status', 'in', ENDED);
    if (source?.resumed_at) query = query.where('started_at', '>', source.resumed_at);
    const rows = await query.orderBy('id', 'desc').limit(Math.max(1, max)).execute();
    const count = rows.findIndex((r) => r.status !== 'failed');
    return { count: count === -1 ? rows.length : count, lastError: rows[0]?.error ?? null };
  }

  /**
   * The failures a run opened (not the open ones it failed again): recorded by the run, first
   * failed since it started. Reads the source's open failures, through their index.
   */
  async newFailuresOf(sourceId: string, runId: string): Promise<number> {
    const row = await this.db
      .selectFrom('failures')
      .innerJoin('runs', 'runs.id', 'failures.run_id')
      .select(sql<string>`count(*)`.as('n'))
      .where('failures.source_id', '=', sourceId)
      .where('failures.resolved_at', 'is', null)
      .where('failures.run_id', '=', runId)
      .whereRef('failures.first_failed_at', '>=', 'runs.started_at')
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The file-level failures (`stage`) a run opened: the files it could not read, and why. */
  async newRejectedFilesOf(
    sourceId: string,
    runId: string,
    stage = FILE_FAILURE_STAGE,
  ): Promise<Array<{ file: string; reason: string }>> {
    const rows = await this.db
      .selectFrom('failures')
      .innerJoin('runs', 'runs.id', 'failures.run_id')
      .select(['failures.source_key', 'failures.message'])
      .where('failures.source_id', '=', sourceId)
      .where('failures.resolved_at', 'is', null)
      .where('failures.run_id', '=', runId)
      .where('failures.stage', '=', stage)
      .whereRef('failures.first_failed_at', '>=', 'runs.started_at')
      .orderBy('failures.source_key')
      .execute();
    return rows.map((r) => ({ file: r.source_key, reason: r.message }));
  }
}

const pauseOf = (r: {
  paused_by: 'auto' | 'user' | null;
  pause_reason: string | null;
  paused_at: Date | null;
}): SourcePause => ({ by: r.paused_by ?? 'user', reason: r.pause_reason, at: r.paused_at });
