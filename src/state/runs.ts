import type { Selectable } from 'kysely';
import type { RunStatus } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import type { RunsTable } from './schema.js';

export type { RunStatus };

export interface RunRow {
  id: string;
  sourceId: string;
  trigger: string;
  status: RunStatus;
  dryRun: boolean;
  counts: Record<string, unknown>;
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

/** One row per pass of one source, with its counts. */
export class RunsRepository {
  constructor(private readonly db: StateDb) {}

  async start(sourceId: string, trigger: string, dryRun: boolean): Promise<string> {
    await this.db
      .insertInto('sources')
      .values({ id: sourceId, type: 'unknown' })
      .onConflict((oc) => oc.doNothing())
      .execute();
    const row = await this.db
      .insertInto('runs')
      .values({ source_id: sourceId, trigger, status: 'running', dry_run: dryRun, counts: '{}', error: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(row.id);
  }

  async finish(
    id: string,
    status: RunStatus,
    counts: Record<string, unknown>,
    error: string | null = null,
  ): Promise<void> {
    await this.db
      .updateTable('runs')
      .set({ status, counts: JSON.stringify(counts), error, finished_at: new Date() })
      .where('id', '=', id)
      .execute();
  }

  async recent(sourceId?: string, limit = 20): Promise<RunRow[]> {
    let query = this.db.selectFrom('runs').selectAll();
    if (sourceId) query = query.where('source_id', '=', sourceId);
    const rows = await query.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toRunRow);
  }
}

/** A `runs` row as the application sees it. */
export const toRunRow = (r: Selectable<RunsTable>): RunRow => ({
  id: String(r.id),
  sourceId: r.source_id,
  trigger: r.trigger,
  status: r.status,
  dryRun: r.dry_run,
  counts: r.counts,
  error: r.error,
  startedAt: r.started_at,
  finishedAt: r.finished_at,
});
