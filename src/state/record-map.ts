import type { StateDb } from './database.js';
import type { RecordKind } from './schema.js';

/** What the state DB knows of one synced record. */
export interface MappedRecord {
  sourceKey: string;
  apiId: string;
  contentHash: string;
  /** The values last written that can still change remotely (paid amount, due date, tags...). */
  syncedState: Record<string, unknown>;
  /** The source record as last synced, for re-syncs on demand. */
  record?: object | undefined;
}

/** source key -> API id and content hash, per source and kind. */
export class RecordMapRepository {
  constructor(private readonly db: StateDb) {}

  async getMany(
    sourceId: string,
    kind: RecordKind,
    keys: readonly string[],
  ): Promise<Map<string, MappedRecord>> {
    const found = new Map<string, MappedRecord>();
    if (keys.length === 0) return found;
    const rows = await this.db
      .selectFrom('record_map')
      .select(['source_key', 'api_id', 'content_hash', 'synced_state'])
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', 'in', [...new Set(keys)])
      .execute();
    for (const row of rows) {
      found.set(row.source_key, {
        sourceKey: row.source_key,
        apiId: row.api_id,
        contentHash: row.content_hash,
        syncedState: row.synced_state,
      });
    }
    return found;
  }

  async get(sourceId: string, kind: RecordKind, key: string): Promise<MappedRecord | undefined> {
    return (await this.getMany(sourceId, kind, [key])).get(key);
  }

  async save(sourceId: string, kind: RecordKind, record: MappedRecord, runId: string | null): Promise<void> {
    const values = {
      api_id: record.apiId,
      content_hash: record.contentHash,
      synced_state: JSON.stringify(record.syncedState),
      ...(record.record ? { record: JSON.stringify(record.record) } : {}),
      synced_at: new Date(),
      last_run_id: runId,
    };
    await this.db
      .insertInto('record_map')
      .values({ source_id: sourceId, kind, source_key: record.sourceKey, ...values })
      .onConflict((oc) => oc.columns(['source_id', 'kind', 'source_key']).doUpdateSet(values))
      .execute();
  }

  /** The stored records of a source (all, or the given keys of one kind), for re-syncs on demand. */
  async storedRecords(
    sourceId: string,
    filter: { kind?: RecordKind; keys?: readonly string[] } = {},
  ): Promise<Array<{ kind: RecordKind; sourceKey: string; record: Record<string, unknown> }>> {
    let query = this.db
      .selectFrom('record_map')
      .select(['kind', 'source_key', 'record'])
      .where('source_id', '=', sourceId)
      .where('record', 'is not', null);
    if (filter.kind) query = query.where('kind', '=', filter.kind);
    if (filter.keys) query = query.where('source_key', 'in', [...filter.keys]);
    const rows = await query.orderBy('source_key').execute();
    return rows.map((r) => ({ kind: r.kind, sourceKey: r.source_key, record: r.record! }));
  }

  /** Forgets the hash of some records, so the next pass compares (and writes) them again. */
  async resetHash(sourceId: string, kind: RecordKind, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.db
      .updateTable('record_map')
      .set({ content_hash: '' })
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', 'in', [...keys])
      .execute();
  }

  /** Full re-sync: forget the hashes so every record is compared again (the API ids are kept). */
  async resetHashes(sourceId: string): Promise<number> {
    const result = await this.db
      .updateTable('record_map')
      .set({ content_hash: '' })
      .where('source_id', '=', sourceId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async count(sourceId: string): Promise<Record<RecordKind, number>> {
    const rows = await this.db
      .selectFrom('record_map')
      .select(['kind', (eb) => eb.fn.countAll<string>().as('n')])
      .where('source_id', '=', sourceId)
      .groupBy('kind')
      .execute();
    const counts: Record<RecordKind, number> = { account: 0, invoice: 0, creditNote: 0 };
    for (const row of rows) counts[row.kind] = Number(row.n);
    return counts;
  }
}
