import { sql } from 'kysely';
import type { BatchDiff, MappedRecord, RecordKind } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import { type StateScopes, scopeColumns, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

export type { BatchDiff, MappedRecord };

type ChangedRow = [
  sourceKey: string,
  apiId: string,
  contentHash: string,
  syncedState: Record<string, unknown>,
  record: object | null,
];

/**
 * source key -> API id and content hash, per source and kind, within the source's scope (its
 * connection and organization, see `state/scopes.ts`): a remote id means something in one
 * organization only.
 *
 * Every statement here is idempotent, so each is `retried` on a lost connection (see `StateCalls`):
 * reads; `save`, an upsert of what the caller holds (with the delete of its pending write by key);
 * `setFingerprints`, `resetHash` and `resetHashes`, which set values the statement names; and the
 * table's upkeep (`vacuum (analyze)`).
 */
export class RecordMapRepository {
  /** Rows written through this repository since it was last vacuumed and analyzed. */
  #writtenSinceAnalyze = 0;
  /** Per source: rows written through this repository, and the count at which it maintains the table next. */
  readonly #growth = new Map<string, { written: number; maintainAt: number }>();

  /**
   * `calls`: how statements run (default `StateCalls.direct`: once, the driver's errors as they are;
   * `syncStateRepos` passes the retrying ones).
   */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  /** The rows of one source's records (in its scope). */
  #ofSource(sourceId: string) {
    return sourceInScope(this.scopes, sourceId);
  }

  /** The rows of one source's records of one kind. */
  #ofKind(sourceId: string, kind: RecordKind) {
    return this.db.selectFrom('record_map').where(this.#ofSource(sourceId)).where('kind', '=', kind);
  }

  /**
   * Vacuums the record map and refreshes its planner statistics once many rows were written
   * (1,000 by default). Without statistics Postgres plans the batch lookups of a table that grew
   * from nothing as a scan of the whole source (measured: several times slower) until autovacuum
   * gets to it; the embedded database has no autovacuum at all, so without this its updated rows
   * would never be reclaimed, and counts could never be answered from the index alone.
   * Returns whether it ran.
   */
  async maintainIfGrown(threshold = 1_000): Promise<boolean> {
    if (this.#writtenSinceAnalyze < threshold) return false;
    this.#writtenSinceAnalyze = 0;
    await this.calls.retried('recordMap.vacuum', () => sql`vacuum (analyze) record_map`.execute(this.db));
    return true;
  }

  /**
   * The same upkeep while a source's rows are written, at 1,000 rows of it written through this
   * repository, then each time that count doubles: a first sync grows a source from nothing within
   * one pass, and until its end (`maintainIfGrown`) the statistics would not know the source. On
   * statistics that do not know it, the planner takes the source's rows for one and reads all of
   * them for each batch (the diff's keys then filter the source's rows instead of finding them in
   * the index: issue 30, a first sync's cost per record growing with its records). Counted per
   * source, so a new source is seen even in a table that another source fills. A pass of n rows
   * maintains about log2(n / 1,000) times: each ANALYZE samples a bounded number of rows, and the
   * vacuums together read the new rows about twice.
   */
  async #maintainAsSourceGrows(sourceId: string): Promise<void> {
    const growth = this.#growth.get(sourceId) ?? { written: 0, maintainAt: GROWTH_FIRST_MAINTENANCE };
    this.#growth.set(sourceId, growth);
    growth.written++;
    if (growth.written < growth.maintainAt) return;
    growth.maintainAt = growth.written * 2;
    await this.maintainIfGrown(1);
  }

  /** How many records of one kind a source has, counting no further than `max` (a bounded cost). */
  async countUpTo(sourceId: string, kind: RecordKind, max: number): Promise<number> {
    const { n } = await this.calls.retried('recordMap.countUpTo', () =>
      this.db
        .selectFrom(() => this.#ofKind(sourceId, kind).select(sql`1`.as('one')).limit(max).as('held'))
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow(),
    );
    return n;
  }

  /**
   * Compares a batch (source key -> fingerprint) with the stored fingerprints in one query that
   * returns the number of keys held and the rows that differ, aggregated in one value: an unchanged
   * batch costs one round trip and no row to decode. Only when some keys are not held does a second
   * query say which. Fingerprints name their record (see `fingerprint`), so "stored fingerprint is
   * none of the batch's" is exactly "this record changed".
   */
  async diff(
    sourceId: string,
    kind: RecordKind,
    fingerprints: ReadonlyMap<string, string>,
  ): Promise<BatchDiff> {
    const changed = new Map<string, MappedRecord>();
    const unknown = new Set<string>();
    if (fingerprints.size === 0) return { changed, unknown };
    const keys = [...fingerprints.keys()];
    const keyList = textList(keys);
    const { known, rows } = await this.calls.retried('recordMap.diff', () =>
      this.#ofKind(sourceId, kind)
        .select([
          sql<number>`count(*)::int`.as('known'),
          sql<
            ChangedRow[]
          >`coalesce(json_agg(json_build_array(source_key, api_id, content_hash, synced_state, record)) filter (where content_hash <> all(${textList([...fingerprints.values()])})), '[]'::json)`.as(
            'rows',
          ),
        ])
        .where(sql<boolean>`source_key = any(${keyList})`)
        .executeTakeFirstOrThrow(),
    );
    for (const [sourceKey, apiId, contentHash, syncedState, record] of rows)
      changed.set(sourceKey, { sourceKey, apiId, contentHash, syncedState, record: record ?? undefined });
    if (known < keys.length) {
      const held = await this.calls.retried('recordMap.heldKeys', () =>
        this.#ofKind(sourceId, kind)
          .select('source_key')
          .where(sql<boolean>`source_key = any(${keyList})`)
          .execute(),
      );
      const heldKeys = new Set(held.map((r) => r.source_key));
      for (const key of keys) if (!heldKeys.has(key)) unknown.add(key);
    }
    return { changed, unknown };
  }

  /**
   * The fingerprints of a source's records of one kind (source key -> fingerprint), in one query,
   * or null when it holds more than `max` of them (nothing more is read then) or a key holds a
   * control character the query joins with.
   */
  async fingerprints(sourceId: string, kind: RecordKind, max: number): Promise<Map<string, string> | null> {
    // One joined text rather than a row per record: decoding rows costs the embedded database
    // several times more than splitting one text (measured: about 3 µs a row against under 1).
    const { n, joined, unsafe } = await this.calls.retried('recordMap.fingerprints', () =>
      this.db
        .selectFrom(() =>
          this.#ofKind(sourceId, kind)
            .select(['source_key', 'content_hash'])
            .limit(max + 1)
            .as('held'),
        )
        .select([
          sql<number>`count(*)::int`.as('n'),
          sql<string | null>`string_agg(source_key || chr(31) || content_hash, chr(30))`.as('joined'),
          sql<boolean | null>`bool_or(strpos(source_key, chr(30)) > 0 or strpos(source_key, chr(31)) > 0)`.as(
            'unsafe',
          ),
        ])
        .executeTakeFirstOrThrow(),
    );
    if (n > max || unsafe === true) return null;
    const found = new Map<string, string>();
    if (joined === null) return found;
    for (const pair of joined.split(RECORD_SEPARATOR)) {
      const cut = pair.indexOf(SEPARATOR);
      found.set(pair.slice(0, cut), pair.slice(cut + 1));
    }
    return found;
  }

  /**
   * A page of the keys of a source's records of one kind whose source is still linked (not
   * `synced_state.unlinked`), in key order after `after` (null: from the first), at most `limit`,
   * with the tags last written (none when no record is stored). Keyset paging on the primary key:
   * a million records are read a page at a time.
   */
  async linkedKeysPage(
    sourceId: string,
    kind: RecordKind,
    after: string | null,
    limit: number,
  ): Promise<Array<{ sourceKey: string; tags: string[] }>> {
    let query = this.#ofKind(sourceId, kind)
      .select(['source_key', sql<unknown>`record->'tags'`.as('tags')])
      .where(sql<boolean>`coalesce(synced_state->>'unlinked', 'false') <> 'true'`);
    if (after !== null) query = query.where('source_key', '>', after);
    const rows = await this.calls.retried('recordMap.linkedKeysPage', () =>
      query.orderBy('source_key').limit(limit).execute(),
    );
    return rows.map((r) => ({
      sourceKey: r.source_key,
      tags: Array.isArray(r.tags) ? r.tags.filter((t): t is string => typeof t === 'string') : [],
    }));
  }

  /** How many records of one kind a source holds whose source is still linked (see `linkedKeysPage`). */
  async countLinked(sourceId: string, kind: RecordKind): Promise<number> {
    const { n } = await this.calls.retried('recordMap.countLinked', () =>
      this.#ofKind(sourceId, kind)
        .select(sql<number>`count(*)::int`.as('n'))
        .where(sql<boolean>`coalesce(synced_state->>'unlinked', 'false') <> 'true'`)
        .executeTakeFirstOrThrow(),
    );
    return n;
  }

  /** Stores new fingerprints of records whose synced values did not change (no API call was made). */
  async setFingerprints(
    sourceId: string,
    kind: RecordKind,
    fingerprints: ReadonlyMap<string, string>,
  ): Promise<void> {
    if (fingerprints.size === 0) return;
    await this.calls.retried('recordMap.setFingerprints', () =>
      sql`update record_map m set content_hash = f.content_hash
        from unnest(${[...fingerprints.keys()]}::text[], ${[...fingerprints.values()]}::text[]) as f(source_key, content_hash)
        where ${sourceInScope(this.scopes, sourceId, 'm')} and m.kind = ${kind} and m.source_key = f.source_key`.execute(
        this.db,
      ),
    );
  }

  async getMany(
    sourceId: string,
    kind: RecordKind,
    keys: readonly string[],
  ): Promise<Map<string, MappedRecord>> {
    const found = new Map<string, MappedRecord>();
    if (keys.length === 0) return found;
    const rows = await this.calls.retried('recordMap.getMany', () =>
      this.#ofKind(sourceId, kind)
        .select(['source_key', 'api_id', 'content_hash', 'synced_state'])
        .where('source_key', 'in', [...new Set(keys)])
        .execute(),
    );
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

  /**
   * Stores what was written of a record. `completing`: the Idempotency-Key of the write that
   * produced it, deleted from `pending_writes` in the same transaction, so a crash leaves either
   * the pending write (sent again with its key, or adopted) or the saved record, never neither.
   */
  async save(
    sourceId: string,
    kind: RecordKind,
    record: MappedRecord,
    runId: string | null,
    options: { completing?: string } = {},
  ): Promise<void> {
    const values = {
      api_id: record.apiId,
      content_hash: record.contentHash,
      synced_state: JSON.stringify(record.syncedState),
      ...(record.record ? { record: JSON.stringify(record.record) } : {}),
      synced_at: new Date(),
      last_run_id: runId,
    };
    const upsert = (db: StateDb) =>
      db
        .insertInto('record_map')
        .values({ ...scopeColumns(this.scopes, sourceId), kind, source_key: record.sourceKey, ...values })
        .onConflict((oc) =>
          oc
            .columns(['connection_id', 'organization_id', 'source_id', 'kind', 'source_key'])
            .doUpdateSet(values),
        )
        .execute();
    const { completing } = options;
    // Its values are fixed before the first attempt: an attempt again writes the same row.
    await this.calls.retried('recordMap.save', async () => {
      if (completing === undefined) await upsert(this.db);
      else
        await this.db.transaction().execute(async (tx) => {
          await upsert(tx);
          await tx.deleteFrom('pending_writes').where('idempotency_key', '=', completing).execute();
        });
    });
    this.#writtenSinceAnalyze++;
    await this.#maintainAsSourceGrows(sourceId);
  }

  /** The stored records of a source (all, or the given keys of one kind), for re-syncs on demand. */
  async storedRecords(
    sourceId: string,
    filter: { kind?: RecordKind; keys?: readonly string[] } = {},
  ): Promise<Array<{ kind: RecordKind; sourceKey: string; record: Record<string, unknown> }>> {
    let query = this.db
      .selectFrom('record_map')
      .select(['kind', 'source_key', 'record'])
      .where(this.#ofSource(sourceId))
      .where('record', 'is not', null);
    if (filter.kind) query = query.where('kind', '=', filter.kind);
    if (filter.keys) query = query.where('source_key', 'in', [...filter.keys]);
    const rows = await this.calls.retried('recordMap.storedRecords', () =>
      query.orderBy('source_key').execute(),
    );
    return rows.map((r) => ({ kind: r.kind, sourceKey: r.source_key, record: r.record! }));
  }

  /** Forgets the hash of some records, so the next pass compares (and writes) them again. */
  async resetHash(sourceId: string, kind: RecordKind, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.calls.retried('recordMap.resetHash', () =>
      this.db
        .updateTable('record_map')
        .set({ content_hash: '' })
        .where(this.#ofSource(sourceId))
        .where('kind', '=', kind)
        .where('source_key', 'in', [...keys])
        .execute(),
    );
  }

  /** Full re-sync: forget the hashes so every record is compared again (the API ids are kept). */
  async resetHashes(sourceId: string): Promise<number> {
    // Counts the rows it matched: an attempt again matches (and counts) the same rows.
    const result = await this.calls.retried('recordMap.resetHashes', () =>
      this.db
        .updateTable('record_map')
        .set({ content_hash: '' })
        .where(this.#ofSource(sourceId))
        .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows);
  }

  async count(sourceId: string): Promise<Record<RecordKind, number>> {
    const rows = await this.calls.retried('recordMap.count', () =>
      this.db
        .selectFrom('record_map')
        .select(['kind', (eb) => eb.fn.countAll<string>().as('n')])
        .where(this.#ofSource(sourceId))
        .groupBy('kind')
        .execute(),
    );
    const counts: Record<RecordKind, number> = { account: 0, invoice: 0, creditNote: 0 };
    for (const row of rows) counts[row.kind] = Number(row.n);
    return counts;
  }
}

/** Rows of a source written before the record map is first maintained during its growth. */
const GROWTH_FIRST_MAINTENANCE = 1_000;

/** Joins values that cannot hold it (unit separator), and pairs of them (record separator). */
const SEPARATOR = '\u001f';
const RECORD_SEPARATOR = '\u001e';

/**
 * A list of texts as one query parameter. Joined by the unit separator and split by the server,
 * it costs a third of what a text[] parameter costs the embedded database to encode (measured on
 * batches of 500 keys); a list with a value holding the separator, or an empty one, goes as a text[].
 */
function textList(values: readonly string[]) {
  // string_to_array('') is an empty array, not one empty text: an empty value goes as a text[] too.
  return values.some((v) => v === '' || v.includes(SEPARATOR))
    ? sql`${[...values]}::text[]`
    : sql`string_to_array(${values.join(SEPARATOR)}::text, ${SEPARATOR})`;
}
