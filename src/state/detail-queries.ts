import type { RecordKind } from '../domain/records.js';
import type { StateDb } from './database.js';
import { DropFilesRepository } from './drop-files.js';
import { type RunRow, toRunRow } from './runs.js';

/** What the record map holds of one record. */
export interface MappedRecordView {
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  apiId: string;
  /** The fingerprint of the record as last synced (empty: compared again on the next pass). */
  contentHash: string;
  syncedAt: Date;
  record: Record<string, unknown> | null;
  lastRunId: string | null;
}

/** A file of a CSV source's ledger, with where its report is. */
export interface DropFileView {
  id: string;
  name: string;
  status: string;
  rows: number;
  failedRows: number;
  error: string | null;
  archivedPath: string | null;
  reportPath: string | null;
  claimedAt: Date;
  finishedAt: Date | null;
}

/** A record a search found: in the record map, or only among failures (it never synced). */
export interface RecordHit {
  kind: RecordKind;
  sourceKey: string;
}

/** The dashboard's reads for the pages of one source, one run and one record. */
export class DetailQueries {
  constructor(private readonly db: StateDb) {}

  async run(id: string): Promise<RunRow | null> {
    if (!/^\d{1,18}$/.test(id)) return null;
    const row = await this.db.selectFrom('runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toRunRow(row) : null;
  }

  /** A page of a source's runs, latest first, and how many it has. */
  async runsOf(
    sourceId: string,
    page: { offset: number; limit: number },
  ): Promise<{ rows: RunRow[]; total: number }> {
    const ofSource = this.db.selectFrom('runs').where('source_id', '=', sourceId);
    const [rows, count] = await Promise.all([
      ofSource.selectAll().orderBy('id', 'desc').offset(page.offset).limit(page.limit).execute(),
      ofSource.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst(),
    ]);
    return { rows: rows.map(toRunRow), total: Number(count?.n ?? 0) };
  }

  async mappedRecord(
    sourceId: string,
    kind: RecordKind,
    sourceKey: string,
  ): Promise<MappedRecordView | null> {
    const r = await this.db
      .selectFrom('record_map')
      .selectAll()
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', '=', sourceKey)
      .executeTakeFirst();
    if (!r) return null;
    return {
      sourceId: r.source_id,
      kind: r.kind,
      sourceKey: r.source_key,
      apiId: r.api_id,
      contentHash: r.content_hash,
      syncedAt: r.synced_at,
      record: r.record,
      lastRunId: r.last_run_id === null ? null : String(r.last_run_id),
    };
  }

  /**
   * The records of a source whose source id is `q` exactly (any kind), or else starts with it (at
   * most `limit`): in the record map, then among failures of records that never synced.
   */
  async searchRecords(
    sourceId: string,
    q: string,
    limit: number,
  ): Promise<{ exact: boolean; hits: RecordHit[] }> {
    const exact = await this.#keys(sourceId, '=', q, limit);
    if (exact.length > 0) return { exact: true, hits: exact };
    const prefix = `${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return { exact: false, hits: await this.#keys(sourceId, 'like', prefix, limit) };
  }

  async #keys(sourceId: string, operator: '=' | 'like', value: string, limit: number): Promise<RecordHit[]> {
    const hits = new Map<string, RecordHit>();
    const add = (rows: ReadonlyArray<{ kind: RecordKind; source_key: string }>) => {
      for (const r of rows)
        if (hits.size < limit)
          hits.set(`${r.kind}\u0000${r.source_key}`, { kind: r.kind, sourceKey: r.source_key });
    };
    add(
      await this.db
        .selectFrom('record_map')
        .select(['kind', 'source_key'])
        .where('source_id', '=', sourceId)
        .where('source_key', operator, value)
        .orderBy('source_key')
        .orderBy('kind')
        .limit(limit)
        .execute(),
    );
    if (hits.size < limit)
      add(
        await this.db
          .selectFrom('failures')
          .select(['kind', 'source_key'])
          .distinct()
          .where('source_id', '=', sourceId)
          .where('source_key', operator, value)
          .orderBy('source_key')
          .orderBy('kind')
          .limit(limit)
          .execute(),
      );
    return [...hits.values()];
  }

  /** The latest files of a CSV source's ledger. */
  async dropFiles(sourceId: string, limit: number): Promise<DropFileView[]> {
    return (await new DropFilesRepository(this.db).recent(sourceId, limit)).map(toDropFileView);
  }

  async dropFile(sourceId: string, id: string): Promise<DropFileView | null> {
    if (!/^\d{1,18}$/.test(id)) return null;
    const row = await this.db
      .selectFrom('drop_files')
      .selectAll()
      .where('source_id', '=', sourceId)
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toDropFileView(row) : null;
  }
}

const toDropFileView = (r: {
  id: string;
  name: string;
  status: string;
  rows: number;
  failed_rows: number;
  error: string | null;
  archived_path: string | null;
  report_path: string | null;
  claimed_at: Date;
  finished_at: Date | null;
}): DropFileView => ({
  id: String(r.id),
  name: r.name,
  status: r.status,
  rows: r.rows,
  failedRows: r.failed_rows,
  error: r.error,
  archivedPath: r.archived_path,
  reportPath: r.report_path,
  claimedAt: r.claimed_at,
  finishedAt: r.finished_at,
});
