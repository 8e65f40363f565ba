import type { StateDb } from './database.js';
import { staleRunIds } from './runs.js';
import { StateCalls } from './state-calls.js';

/**
 * What the state DB says of a source's passes, for the worker's rule of one pass per source when
 * its Redis lost the source lock (a restart without persistence): the state DB survives that, and
 * its `runs` already tell a live pass from a dead one (a run in progress holds a lock that proves
 * its process alive, see `runs.ts`). Read-only: no table of its own.
 *
 * - `live`: a job starts no pass while its source has one (the old pass still runs);
 * - `startedAfter`: the fencing token of a pass is its run id (a sequence): a pass that finds a run
 *   of its source started after its own stops before its next batch.
 *
 * Both are reads: `retried` on a lost connection (see `StateCalls`).
 */
export class SourcePasses {
  /** `calls`: how statements run (default `StateCalls.direct`; the worker passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  /** The ids of the source's runs in progress whose process is alive (this process's included). */
  async live(sourceId: string): Promise<string[]> {
    const rows = await this.calls.retried('sourcePasses.running', () =>
      this.db
        .selectFrom('runs')
        .select('id')
        .where('source_id', '=', sourceId)
        .where('status', '=', 'running')
        .execute(),
    );
    if (rows.length === 0) return [];
    const ids = rows.map((r) => String(r.id));
    const stale = await this.calls.retried('sourcePasses.stale', () => staleRunIds(this.db, ids));
    return ids.filter((id) => !stale.has(id));
  }

  /** The first run of the source started after run `runId` (any status), or null when there is none. */
  async startedAfter(sourceId: string, runId: string): Promise<string | null> {
    const row = await this.calls.retried('sourcePasses.startedAfter', () =>
      this.db
        .selectFrom('runs')
        .select('id')
        .where('source_id', '=', sourceId)
        .where('id', '>', runId)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst(),
    );
    return row ? String(row.id) : null;
  }
}
