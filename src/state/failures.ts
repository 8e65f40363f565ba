import { type Selectable, sql } from 'kysely';
import { RECORD_KINDS } from '../domain/records.js';
import type { FailureInput, FailureRow, RecordKind } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import type { FailuresTable } from './schema.js';
import { type StateScopes, scopeColumns, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

export type { FailureInput, FailureRow };

/** When a retryable failure is retried after its n-th attempt: 1 min, doubling, at most 1 h. */
const RETRY_BASE_SECONDS = 60;
const RETRY_MAX_SECONDS = 3_600;
const retryDelayMs = (attempts: number): number =>
  1000 * Math.min(RETRY_MAX_SECONDS, RETRY_BASE_SECONDS * 2 ** (attempts - 1));

/**
 * Records that failed, one open failure per record; resolved when the record later syncs. A
 * source's failures are opened, read and closed within its scope (see `state/scopes.ts`: the
 * organization that refused it).
 *
 * What a lost connection does to each statement (see `StateCalls`): the reads, `resolve` (it closes
 * the failures still open) and the table's upkeep (`analyze`) are `retried`. Run `once`: `record` and
 * `recordMany`, whose upsert adds the attempts to those of the open failure (an attempt again after
 * one that took effect would count them twice, and put its next retry further off); and `dismiss`,
 * whose answer is how many it closed (an attempt again would close none and say 0).
 */
export class FailuresRepository {
  /** Failures written by this process, and the count at which the table is analyzed next. */
  #written = 0;
  #analyzeAt = 10_000;

  /** `calls`: how statements run (default `StateCalls.direct`; `syncStateRepos` passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  /** One failure: opened, or the open one of that record updated (its attempts counted). */
  async record(input: FailureInput): Promise<void> {
    await this.#recordChunk([input]);
    await this.#analyzeIfGrown(1);
  }

  /**
   * Several failures in one statement (a batch of refused rows: 500,000 of them cost 500
   * statements, not 500,000). A key given twice keeps the last, with both attempts counted.
   */
  async recordMany(inputs: readonly FailureInput[]): Promise<void> {
    // Bounded statements: 1,000 rows of 16 values stay far below Postgres' 65,535 parameters.
    for (let i = 0; i < inputs.length; i += 1_000) await this.#recordChunk(inputs.slice(i, i + 1_000));
    await this.#analyzeIfGrown(inputs.length);
  }

  /**
   * A file of bad rows adds failures by the hundred thousand within one pass, long before autovacuum
   * looks: on statistics that still say "empty", Postgres would find a key among a source's open
   * failures by scanning them all, once per batch. Analyzed at 10,000 rows written, then each time
   * the count doubles: a handful of times per pass at most.
   */
  async #analyzeIfGrown(added: number): Promise<void> {
    this.#written += added;
    if (this.#written < this.#analyzeAt) return;
    this.#analyzeAt = this.#written * 2;
    await this.calls.retried('failures.analyze', () => sql`analyze failures`.execute(this.db));
  }

  /**
   * One upsert on the open-failure index: a new failure is inserted; an open one of the same record
   * is updated, its attempts added up and its next retry computed from them in the statement. No
   * read first: the open failures of a source can be many (a file of bad rows), and a lookup by
   * key among them would cost a scan per batch while the table's statistics lag behind.
   */
  async #recordChunk(inputs: readonly FailureInput[]): Promise<void> {
    if (inputs.length === 0) return;
    const now = new Date();
    const byKey = new Map<string, { input: FailureInput; times: number }>();
    for (const input of inputs) {
      const key = `${input.sourceId}\u0000${input.kind}\u0000${input.sourceKey}`;
      byKey.set(key, { input, times: (byKey.get(key)?.times ?? 0) + 1 });
    }
    const rows = [...byKey.values()].map(({ input, times }) => ({
      ...scopeColumns(this.scopes, input.sourceId),
      kind: input.kind,
      source_key: input.sourceKey,
      stage: input.stage,
      status: input.status ?? null,
      api_code: input.apiCode ?? null,
      message: input.message,
      file: input.file ?? null,
      line: input.line ?? null,
      column_name: input.column ?? null,
      retryable: input.retryable,
      attempts: times,
      next_retry_at: input.retryable ? new Date(now.getTime() + retryDelayMs(times)) : null,
      payload: input.payload ? JSON.stringify(input.payload) : null,
      run_id: input.runId ?? null,
      last_failed_at: now,
    }));
    await this.calls.once('failures.record', () =>
      this.db
        .insertInto('failures')
        .values(rows)
        .onConflict((oc) =>
          oc
            .columns(['connection_id', 'organization_id', 'source_id', 'kind', 'source_key'])
            .where('resolved_at', 'is', null)
            .doUpdateSet((eb) => ({
              stage: eb.ref('excluded.stage'),
              status: eb.ref('excluded.status'),
              api_code: eb.ref('excluded.api_code'),
              message: eb.ref('excluded.message'),
              file: eb.ref('excluded.file'),
              line: eb.ref('excluded.line'),
              column_name: eb.ref('excluded.column_name'),
              retryable: eb.ref('excluded.retryable'),
              attempts: sql<number>`failures.attempts + excluded.attempts`,
              // retryDelayMs, in SQL, of the attempts counted above.
              next_retry_at: sql<Date | null>`case when excluded.retryable then excluded.last_failed_at +
              least(${RETRY_MAX_SECONDS}::int, ${RETRY_BASE_SECONDS}::int * power(2, least(failures.attempts + excluded.attempts - 1, 12))::int)
              * interval '1 second' end`,
              payload: eb.ref('excluded.payload'),
              run_id: eb.ref('excluded.run_id'),
              last_failed_at: eb.ref('excluded.last_failed_at'),
            })),
        )
        .execute(),
    );
  }

  /** The kinds of which a source has open failures: one probe of the open-failure index per kind. */
  async openKinds(sourceId: string): Promise<Set<RecordKind>> {
    const kinds = new Set<RecordKind>();
    for (const kind of RECORD_KINDS) {
      const open = await this.calls.retried('failures.openKinds', () =>
        this.db
          .selectFrom('failures')
          .select('id')
          .where(sourceInScope(this.scopes, sourceId))
          .where('kind', '=', kind)
          .where('resolved_at', 'is', null)
          .limit(1)
          .executeTakeFirst(),
      );
      if (open) kinds.add(kind);
    }
    return kinds;
  }

  async resolve(
    sourceId: string,
    kind: RecordKind,
    sourceKeys: readonly string[],
    options: { sparing?: string; only?: string } = {},
  ): Promise<void> {
    if (sourceKeys.length === 0) return;
    let query = this.db
      .updateTable('failures')
      .set({ resolved_at: new Date() })
      .where(sourceInScope(this.scopes, sourceId))
      .where('kind', '=', kind)
      .where('source_key', 'in', [...sourceKeys])
      .where('resolved_at', 'is', null);
    if (options.sparing !== undefined) query = query.where('stage', '!=', options.sparing);
    if (options.only !== undefined) query = query.where('stage', '=', options.only);
    await this.calls.retried('failures.resolve', () => query.execute());
  }

  /**
   * Closes open failures of a source on a user's word: they no longer count as open (`resolved_at`
   * is set) and stay in the history with who dismissed them and why. The record failing again
   * later opens a new failure. Returns how many were dismissed (ids not open are left alone).
   */
  async dismiss(
    sourceId: string,
    ids: readonly string[],
    dismissal: { reason: string; by: string },
  ): Promise<number> {
    const valid = ids.filter((id) => /^\d{1,18}$/.test(id));
    if (valid.length === 0) return 0;
    const now = new Date();
    const result = await this.calls.once('failures.dismiss', () =>
      this.db
        .updateTable('failures')
        .set({
          resolved_at: now,
          dismissed_at: now,
          dismissed_reason: dismissal.reason,
          dismissed_by: dismissal.by,
          next_retry_at: null,
        })
        // Chosen by id (the dashboard's selection, which lists every scope): the source is enough.
        .where('source_id', '=', sourceId)
        .where('id', 'in', valid)
        .where('resolved_at', 'is', null)
        .executeTakeFirst(),
    );
    return Number(result.numUpdatedRows);
  }

  /** Open failures of a source, counted in the database. */
  async countOpen(sourceId: string): Promise<number> {
    const row = await this.calls.retried('failures.countOpen', () =>
      this.db
        .selectFrom('failures')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where(sourceInScope(this.scopes, sourceId))
        .where('resolved_at', 'is', null)
        .executeTakeFirst(),
    );
    return Number(row?.n ?? 0);
  }

  /** Open failures, by source, kind and key: of one source in its scope, or of all in every scope. */
  async open(
    filter: {
      sourceId?: string | undefined;
      kind?: RecordKind;
      sourceKeys?: readonly string[];
      ids?: readonly string[];
    } = {},
  ): Promise<FailureRow[]> {
    let query = this.db.selectFrom('failures').selectAll().where('resolved_at', 'is', null);
    // Chosen by id (the dashboard's selection, which lists every scope), the source is enough;
    // else the source's failures in its scope.
    if (filter.sourceId)
      query = query.where(
        filter.ids
          ? sql<boolean>`source_id = ${filter.sourceId}`
          : sourceInScope(this.scopes, filter.sourceId),
      );
    if (filter.kind) query = query.where('kind', '=', filter.kind);
    if (filter.sourceKeys) {
      if (filter.sourceKeys.length === 0) return [];
      query = query.where('source_key', 'in', [...filter.sourceKeys]);
    }
    if (filter.ids) {
      const ids = filter.ids.filter((id) => /^\d{1,18}$/.test(id));
      if (ids.length === 0) return [];
      query = query.where('id', 'in', ids);
    }
    const rows = await this.calls.retried('failures.open', () =>
      query.orderBy('source_id').orderBy('kind').orderBy('source_key').execute(),
    );
    return rows.map(toFailureRow);
  }
}

/** A `failures` row as the application sees it. */
export const toFailureRow = (r: Selectable<FailuresTable>): FailureRow => ({
  id: String(r.id),
  sourceId: r.source_id,
  kind: r.kind,
  sourceKey: r.source_key,
  stage: r.stage,
  status: r.status,
  apiCode: r.api_code,
  message: r.message,
  file: r.file,
  line: r.line,
  column: r.column_name,
  retryable: r.retryable,
  attempts: r.attempts,
  nextRetryAt: r.next_retry_at,
  payload: r.payload,
  firstFailedAt: r.first_failed_at,
  lastFailedAt: r.last_failed_at,
});
