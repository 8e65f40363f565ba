import { sql } from 'kysely';
import type { StateDb } from './database.js';

/** One log line of a run, as `run_logs` keeps it. */
export interface RunLogLine {
  runId: string;
  at: Date;
  /** pino's level label (`info`, `warn`, ...). */
  level: string;
  msg: string;
  /** The line's other fields (bindings and the object logged), redacted like every line. */
  fields: Record<string, unknown> | null;
}

/** How much of the run log is kept. */
export interface RunLogRetention {
  /** Logs of runs that started longer ago than this are deleted. */
  keepDays: number;
  /** Only the logs of this many latest runs (of all sources) are kept. */
  keepRuns: number;
  /**
   * The records runs touched (`run_records`: a record's page lists its runs) of runs that started
   * longer ago than this are deleted too. Default 90.
   */
  keepRecordsDays?: number;
  /**
   * The runs themselves (their counts and errors) and the drop-file ledger's entries older than
   * this are deleted too, except each source's latest run, a run still running and the runs of open
   * failures. Default 180; never less than `keepRecordsDays` (the rows of a run go before the run).
   */
  keepHistoryDays?: number;
}

export const DEFAULT_RUN_LOG_RETENTION: RunLogRetention = {
  keepDays: 14,
  keepRuns: 500,
  keepRecordsDays: 90,
  keepHistoryDays: 180,
};

/** Rows of one insert: 6 values each, far below Postgres' 65,535 parameters. */
const CHUNK = 1_000;

/**
 * The log lines of runs (`run_logs`), filled by `RunLogSink` and read by the run's page. Bounded
 * twice: the sink keeps at most a fixed number of lines per run, and `prune` deletes the logs of
 * runs that are too old or beyond the latest `keepRuns`.
 */
export class RunLogsRepository {
  constructor(private readonly db: StateDb) {}

  async insertMany(lines: readonly RunLogLine[]): Promise<void> {
    for (let i = 0; i < lines.length; i += CHUNK) {
      await this.db
        .insertInto('run_logs')
        .values(
          lines.slice(i, i + CHUNK).map((l) => ({
            run_id: l.runId,
            at: l.at,
            level: l.level,
            msg: l.msg,
            fields: l.fields === null ? null : JSON.stringify(l.fields),
          })),
        )
        .execute();
    }
  }

  /** The lines of a run in the order they were written (at most `limit`). */
  async ofRun(runId: string, limit = 1_000): Promise<RunLogLine[]> {
    const rows = await this.db
      .selectFrom('run_logs')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      runId: String(r.run_id),
      at: r.at,
      level: r.level,
      msg: r.msg,
      fields: r.fields,
    }));
  }

  /**
   * Deletes the logs of runs beyond the latest `keepRuns` or started before `now - keepDays`, and
   * the touched records of runs started before `now - keepRecordsDays`; returns how many log lines
   * went. Run ids grow with time, so each bound is one range of run ids (the indexes on `run_id`
   * serve the deletes).
   */
  async prune(retention: RunLogRetention, now: Date = new Date()): Promise<number> {
    const recordsCutoff = new Date(now.getTime() - (retention.keepRecordsDays ?? 90) * 86_400_000);
    const old = await this.db
      .selectFrom('runs')
      .select((eb) => eb.fn.max('id').as('below'))
      .where('started_at', '<', recordsCutoff)
      .executeTakeFirst();
    if (old?.below !== null && old?.below !== undefined)
      await this.db.deleteFrom('run_records').where('run_id', '<=', String(old.below)).execute();
    const cutoff = new Date(now.getTime() - retention.keepDays * 86_400_000);
    const { rows } = await sql<{ below: string | null }>`select greatest(
        (select id from runs order by id desc offset ${Math.max(0, retention.keepRuns)} limit 1),
        (select max(id) from runs where started_at < ${cutoff})
      )::text as below`.execute(this.db);
    const below = rows[0]?.below;
    await this.#pruneHistory(retention, now);
    if (below === null || below === undefined) return 0;
    const result = await this.db.deleteFrom('run_logs').where('run_id', '<=', below).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /**
   * Deletes the runs and drop-file entries older than `keepHistoryDays` (one row per tick of every
   * source otherwise grows for ever), keeping each source's latest run (what `status` shows), the
   * runs under way and those of open failures (their pages link to them). A file dropped again after
   * its entry went is read again: its unchanged rows cost no API call.
   */
  async #pruneHistory(retention: RunLogRetention, now: Date): Promise<void> {
    const days = Math.max(retention.keepHistoryDays ?? 180, retention.keepRecordsDays ?? 90);
    const cutoff = new Date(now.getTime() - days * 86_400_000);
    await sql`delete from runs
      where started_at < ${cutoff}
        and status <> 'running'
        and id not in (select max(id) from runs group by connection_id, organization_id, source_id)
        and id not in (select run_id from failures where resolved_at is null and run_id is not null)`.execute(
      this.db,
    );
    await this.db.deleteFrom('drop_files').where('finished_at', '<', cutoff).execute();
  }
}
