import { sql } from 'kysely';
import type { StateDb } from './database.js';
import { type FailureRow, toFailureRow } from './failures.js';
import { type RunRow, staleRunIds, toRunRow } from './runs.js';
import type { RecordKind } from './schema.js';

/** A run as the dashboard shows it (counts as stored: `{accounts: {created, ...}, ...}`). */
export type RunRecord = RunRow;
/** An open failure with its reason and payload. */
export type FailureRecord = FailureRow;

export interface CursorRecord {
  sourceId: string;
  stream: string;
  cursor: Record<string, unknown> | null;
  updatedAt: Date;
}

export interface DropFileRecord {
  sourceId: string;
  name: string;
  status: string;
  rows: number;
  failedRows: number;
  error: string | null;
  finishedAt: Date | null;
}

/**
 * The read side of the dashboard: a few set-based queries over the state DB, so one page costs a
 * fixed number of round trips whatever the number of sources.
 */
export class StatusQueries {
  constructor(private readonly db: StateDb) {}

  /** `select 1`: the DB answers (readiness). */
  async ping(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }

  async recentRuns(limit: number): Promise<RunRecord[]> {
    const rows = await this.db.selectFrom('runs').selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRunRow);
  }

  /** The latest run of each source, whatever its status. */
  async lastRuns(): Promise<Map<string, RunRecord>> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .distinctOn('source_id')
      .orderBy('source_id')
      .orderBy('id', 'desc')
      .execute();
    return new Map(rows.map((r) => [r.source_id, toRunRow(r)]));
  }

  /** The runs in progress (a source can show "running" while its job is active). */
  async runningRuns(): Promise<Map<string, RunRecord>> {
    const rows = await this.db
      .selectFrom('runs')
      .selectAll()
      .where('status', '=', 'running')
      .where('finished_at', 'is', null)
      .orderBy('id', 'desc')
      .execute();
    const bySource = new Map<string, RunRecord>();
    for (const row of rows) if (!bySource.has(row.source_id)) bySource.set(row.source_id, toRunRow(row));
    return bySource;
  }

  /** When each source last had a pass that ran to its end (succeeded, or partial: some rows refused). */
  async lastSuccesses(): Promise<Array<{ sourceId: string; at: Date }>> {
    const rows = await this.db
      .selectFrom('runs')
      .select(['source_id', (eb) => eb.fn.max('finished_at').as('at')])
      // A partial pass ran to its end too (some rows refused: those are failures, alerted apart).
      .where('status', 'in', ['succeeded', 'partial'])
      .where('dry_run', '=', false)
      .groupBy('source_id')
      .execute();
    return rows
      .filter((r) => r.at !== null)
      .map((r) => ({ sourceId: r.source_id, at: new Date(r.at as Date) }));
  }

  /** Synced records per source and kind (the record map). */
  async recordCounts(): Promise<Map<string, Record<RecordKind, number>>> {
    const rows = await this.db
      .selectFrom('record_map')
      .select(['source_id', 'kind', (eb) => eb.fn.countAll<string>().as('n')])
      .groupBy(['source_id', 'kind'])
      .execute();
    const counts = new Map<string, Record<RecordKind, number>>();
    for (const row of rows) {
      const of = counts.get(row.source_id) ?? { account: 0, invoice: 0, creditNote: 0 };
      of[row.kind] = Number(row.n);
      counts.set(row.source_id, of);
    }
    return counts;
  }

  async openFailureCounts(): Promise<Map<string, number>> {
    const rows = await this.db
      .selectFrom('failures')
      .select(['source_id', (eb) => eb.fn.countAll<string>().as('n')])
      .where('resolved_at', 'is', null)
      .groupBy('source_id')
      .execute();
    return new Map(rows.map((r) => [r.source_id, Number(r.n)]));
  }

  /** The open failures, latest first. */
  async openFailures(limit: number): Promise<FailureRecord[]> {
    const rows = await this.db
      .selectFrom('failures')
      .selectAll()
      .where('resolved_at', 'is', null)
      .orderBy('last_failed_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toFailureRow);
  }

  async cursors(): Promise<CursorRecord[]> {
    const rows = await this.db
      .selectFrom('cursors')
      .selectAll()
      .orderBy('source_id')
      .orderBy('stream')
      .execute();
    return rows.map((r) => ({
      sourceId: r.source_id,
      stream: r.stream,
      cursor: r.cursor,
      updatedAt: r.updated_at,
    }));
  }

  /** The latest files of each CSV source (at most `perSource` each). */
  async recentDropFiles(perSource: number): Promise<DropFileRecord[]> {
    const ranked = this.db
      .selectFrom('drop_files')
      .select([
        'source_id',
        'name',
        'status',
        'rows',
        'failed_rows',
        'error',
        'finished_at',
        'id',
        sql<number>`row_number() over (partition by source_id order by id desc)`.as('rank'),
      ])
      .as('ranked');
    const rows = await this.db
      .selectFrom(ranked)
      .selectAll()
      .where('rank', '<=', perSource)
      .orderBy('source_id')
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => ({
      sourceId: r.source_id,
      name: r.name,
      status: r.status,
      rows: r.rows,
      failedRows: r.failed_rows,
      error: r.error,
      finishedAt: r.finished_at,
    }));
  }

  /** Which of these runs are `running` with no live process behind them (see `staleRunIds`). */
  staleRuns(ids: readonly string[]): Promise<Set<string>> {
    return staleRunIds(this.db, ids);
  }

  /** Whether the record map knows this record (a record re-sync replays its last synced version). */
  async hasSyncedRecord(sourceId: string, kind: RecordKind, sourceKey: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('record_map')
      .select('source_key')
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', '=', sourceKey)
      .where('record', 'is not', null)
      .executeTakeFirst();
    return row !== undefined;
  }
}

/** The `lastSuccess` reader of `SyncMetrics`, over the state DB. */
export const lastSuccessfulRuns = (db: StateDb) => {
  const queries = new StatusQueries(db);
  return () => queries.lastSuccesses();
};
