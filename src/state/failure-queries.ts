import type { Selectable } from 'kysely';
import type { RecordKind } from '../domain/records.js';
import { FILE_FAILURE_STAGE } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import { type FailureRow, toFailureRow } from './failures.js';
import type { FailuresTable } from './schema.js';

/** A failure with what closed it, when it is closed: resolved by a later sync, or dismissed by a user. */
export interface FailureHistoryRow extends FailureRow {
  runId: string | null;
  resolvedAt: Date | null;
  dismissedAt: Date | null;
  dismissedReason: string | null;
  dismissedBy: string | null;
}

/** What the failures CSV needs of an open failure: the row as sent or read, and why it failed. */
export interface ExportableFailure {
  id: string;
  sourceKey: string;
  message: string;
  apiCode: string | null;
  /** The file the row came from (a drop file's name), when it came from one. */
  file: string | null;
  line: number | null;
  column: string | null;
  payload: Record<string, unknown> | null;
  /** The record as last synced, when the failure kept no payload. */
  lastSynced: Record<string, unknown> | null;
}

const toHistoryRow = (r: Selectable<FailuresTable>): FailureHistoryRow => ({
  ...toFailureRow(r),
  runId: r.run_id === null ? null : String(r.run_id),
  resolvedAt: r.resolved_at,
  dismissedAt: r.dismissed_at,
  dismissedReason: r.dismissed_reason,
  dismissedBy: r.dismissed_by,
});

/** The dashboard's reads of failures: pages of open ones, the history, a run's, a record's, the export. */
export class FailureQueries {
  constructor(private readonly db: StateDb) {}

  /** A page of a source's open failures, latest first, and how many are open. */
  async openOfSource(
    sourceId: string,
    page: { offset: number; limit: number },
  ): Promise<{ rows: FailureHistoryRow[]; total: number }> {
    const open = this.db
      .selectFrom('failures')
      .where('source_id', '=', sourceId)
      .where('resolved_at', 'is', null);
    const [rows, count] = await Promise.all([
      open
        .selectAll()
        .orderBy('last_failed_at', 'desc')
        .orderBy('id', 'desc')
        .offset(page.offset)
        .limit(page.limit)
        .execute(),
      open.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst(),
    ]);
    return { rows: rows.map(toHistoryRow), total: Number(count?.n ?? 0) };
  }

  /**
   * Open failures of a source per kind, as rows the CSV downloads hold (they are per kind): a file
   * that could not be read at all is no row to correct (it is fixed and dropped again as a whole).
   */
  async openCountsByKind(sourceId: string): Promise<Record<RecordKind, number>> {
    const rows = await this.db
      .selectFrom('failures')
      .select(['kind', (eb) => eb.fn.countAll<string>().as('n')])
      .where('source_id', '=', sourceId)
      .where('resolved_at', 'is', null)
      .where('stage', '!=', FILE_FAILURE_STAGE)
      .groupBy('kind')
      .execute();
    const counts: Record<RecordKind, number> = { account: 0, invoice: 0, creditNote: 0 };
    for (const r of rows) counts[r.kind] = Number(r.n);
    return counts;
  }

  /** A source's closed failures (resolved or dismissed), latest closed first. */
  async closedOfSource(sourceId: string, limit: number): Promise<FailureHistoryRow[]> {
    const rows = await this.db
      .selectFrom('failures')
      .selectAll()
      .where('source_id', '=', sourceId)
      .where('resolved_at', 'is not', null)
      .orderBy('resolved_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toHistoryRow);
  }

  /** The failures a run recorded last (a record that failed again later belongs to that later run). */
  async ofRun(runId: string, limit: number): Promise<FailureHistoryRow[]> {
    const rows = await this.db
      .selectFrom('failures')
      .selectAll()
      .where('run_id', '=', runId)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map(toHistoryRow);
  }

  /** Every failure of one record, open or closed, latest first. */
  async ofRecord(
    sourceId: string,
    kind: RecordKind,
    sourceKey: string,
    limit = 20,
  ): Promise<FailureHistoryRow[]> {
    const rows = await this.db
      .selectFrom('failures')
      .selectAll()
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', '=', sourceKey)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toHistoryRow);
  }

  /**
   * A page of the source's open failures of one kind, in id order after `afterId` (keyset: a
   * download of any size reads them page by page), with the record as last synced beside each;
   * not the files that could not be read at all (no row of theirs was read).
   */
  async exportPage(
    sourceId: string,
    kind: RecordKind,
    afterId: string,
    limit: number,
  ): Promise<ExportableFailure[]> {
    const rows = await this.db
      .selectFrom('failures as f')
      // The record as synced in the failure's own scope (the map may hold it in another one too).
      .leftJoin('record_map as m', (join) =>
        join
          .onRef('m.connection_id', '=', 'f.connection_id')
          .onRef('m.organization_id', '=', 'f.organization_id')
          .onRef('m.source_id', '=', 'f.source_id')
          .onRef('m.kind', '=', 'f.kind')
          .onRef('m.source_key', '=', 'f.source_key'),
      )
      .select([
        'f.id',
        'f.source_key',
        'f.message',
        'f.api_code',
        'f.file',
        'f.line',
        'f.column_name',
        'f.payload',
        'm.record',
      ])
      .where('f.source_id', '=', sourceId)
      .where('f.kind', '=', kind)
      .where('f.resolved_at', 'is', null)
      // A file that could not be read at all has no row to correct: it is dropped again as a whole.
      .where('f.stage', '!=', FILE_FAILURE_STAGE)
      .where('f.id', '>', afterId)
      .orderBy('f.id')
      .limit(limit)
      .execute();
    return rows.map((r) => ({
      id: String(r.id),
      sourceKey: r.source_key,
      message: r.message,
      apiCode: r.api_code,
      file: r.file,
      line: r.line,
      column: r.column_name,
      payload: r.payload,
      lastSynced: r.record ?? null,
    }));
  }
}
