import { type RawBuilder, sql } from 'kysely';
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
  /** An invoice's or credit note's number, as last synced. */
  number?: string | null;
  /** The customer's name: an account's own, or that of a document's account (as last synced). */
  customer?: string | null;
  /** What matched: its source id, its number, or its customer's name. */
  matched?: 'sourceId' | 'number' | 'customer';
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
   * The records of a source whose source id is `q` exactly (any kind), or else whose invoice or
   * credit note number is `q` (any case); else the near ones (at most `limit`): source ids starting
   * with `q`, numbers containing it, and the customers whose name contains it with their documents.
   * Source ids are searched in the record map and among failures of records that never synced;
   * numbers and names in the records as last synced (the record map's `record`), so a record that
   * never synced is found by its source id only.
   */
  async searchRecords(
    sourceId: string,
    q: string,
    limit: number,
  ): Promise<{ exact: boolean; hits: RecordHit[] }> {
    const exact = await this.#keys(sourceId, '=', q, limit);
    if (exact.length > 0) return { exact: true, hits: exact };
    const numbered = await this.#byNumber(
      sourceId,
      sql<boolean>`lower(record->>'number') = ${q.toLowerCase()}`,
      limit,
    );
    if (numbered.length > 0) return { exact: true, hits: numbered };
    const escaped = q.replace(/[\\%_]/g, (c) => `\\${c}`);
    const hits = new Map<string, RecordHit>();
    const add = (found: readonly RecordHit[]) => {
      for (const hit of found) if (hits.size < limit) hits.set(`${hit.kind}\u0000${hit.sourceKey}`, hit);
    };
    add(await this.#keys(sourceId, 'like', `${escaped}%`, limit));
    if (hits.size < limit)
      add(await this.#byNumber(sourceId, sql<boolean>`record->>'number' ilike ${`%${escaped}%`}`, limit));
    if (hits.size < limit) add(await this.#byCustomer(sourceId, `%${escaped}%`, limit));
    return { exact: false, hits: [...hits.values()] };
  }

  /** Invoices and credit notes whose number as last synced meets `condition`. */
  async #byNumber(sourceId: string, condition: RawBuilder<boolean>, limit: number): Promise<RecordHit[]> {
    const rows = await this.db
      .selectFrom('record_map')
      .select(['kind', 'source_key', sql<string | null>`record->>'number'`.as('number')])
      .where('source_id', '=', sourceId)
      .where('kind', 'in', ['invoice', 'creditNote'])
      .where(condition)
      .orderBy('source_key')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ kind: r.kind, sourceKey: r.source_key, number: r.number, matched: 'number' }));
  }

  /** The accounts whose name as last synced contains the pattern, each followed by its documents. */
  async #byCustomer(sourceId: string, pattern: string, limit: number): Promise<RecordHit[]> {
    const accounts = await this.db
      .selectFrom('record_map')
      .select(['source_key', sql<string | null>`record->>'fullName'`.as('name')])
      .where('source_id', '=', sourceId)
      .where('kind', '=', 'account')
      .where(sql<boolean>`record->>'fullName' ilike ${pattern}`)
      .orderBy('source_key')
      .limit(limit)
      .execute();
    if (accounts.length === 0) return [];
    const names = new Map(accounts.map((a) => [a.source_key, a.name]));
    const documents = await this.db
      .selectFrom('record_map')
      .select([
        'kind',
        'source_key',
        sql<string | null>`record->>'number'`.as('number'),
        sql<string>`record->>'accountSourceId'`.as('account'),
      ])
      .where('source_id', '=', sourceId)
      .where('kind', 'in', ['invoice', 'creditNote'])
      .where(sql<string>`record->>'accountSourceId'`, 'in', [...names.keys()])
      .orderBy('source_key')
      .limit(limit)
      .execute();
    const hits: RecordHit[] = [];
    for (const [key, name] of names) {
      hits.push({ kind: 'account', sourceKey: key, customer: name, matched: 'customer' });
      for (const d of documents)
        if (d.account === key)
          hits.push({
            kind: d.kind,
            sourceKey: d.source_key,
            number: d.number,
            customer: name,
            matched: 'customer',
          });
    }
    return hits;
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
