import type { Selectable } from 'kysely';
import type { FailureInput, FailureRow, RecordKind } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import type { FailuresTable } from './schema.js';

export type { FailureInput, FailureRow };

/** Records that failed, one open failure per record; resolved when the record later syncs. */
export class FailuresRepository {
  constructor(
    private readonly db: StateDb,
    private readonly retryDelayMs: (attempts: number) => number = (n) =>
      Math.min(3600_000, 60_000 * 2 ** (n - 1)),
  ) {}

  /** One failure: opened, or the open one of that record updated (its attempts counted). */
  async record(input: FailureInput): Promise<void> {
    await this.#recordChunk([input]);
  }

  /**
   * Several failures in one query and one statement (a batch of refused rows: 500,000 of them cost
   * 1,000 statements, not 500,000). A key given twice keeps the last, with both attempts counted.
   */
  async recordMany(inputs: readonly FailureInput[]): Promise<void> {
    // Bounded statements: 1,000 rows of 16 values stay far below Postgres' 65,535 parameters.
    for (let i = 0; i < inputs.length; i += 1_000) await this.#recordChunk(inputs.slice(i, i + 1_000));
  }

  async #recordChunk(inputs: readonly FailureInput[]): Promise<void> {
    if (inputs.length === 0) return;
    const now = new Date();
    const byKey = new Map<string, { input: FailureInput; times: number }>();
    for (const input of inputs) {
      const key = `${input.sourceId}\u0000${input.kind}\u0000${input.sourceKey}`;
      byKey.set(key, { input, times: (byKey.get(key)?.times ?? 0) + 1 });
    }
    const attemptsBefore = new Map<string, number>();
    const bySourceKind = new Map<string, { sourceId: string; kind: RecordKind; keys: string[] }>();
    for (const { input } of byKey.values()) {
      const group = `${input.sourceId}\u0000${input.kind}`;
      let entry = bySourceKind.get(group);
      if (!entry) {
        entry = { sourceId: input.sourceId, kind: input.kind, keys: [] };
        bySourceKind.set(group, entry);
      }
      entry.keys.push(input.sourceKey);
    }
    for (const { sourceId, kind, keys } of bySourceKind.values()) {
      const open = await this.db
        .selectFrom('failures')
        .select(['source_key', 'attempts'])
        .where('source_id', '=', sourceId)
        .where('kind', '=', kind)
        .where('resolved_at', 'is', null)
        .where('source_key', 'in', keys)
        .execute();
      for (const row of open)
        attemptsBefore.set(`${sourceId}\u0000${kind}\u0000${row.source_key}`, row.attempts);
    }
    const rows = [...byKey.entries()].map(([key, { input, times }]) => {
      const attempts = (attemptsBefore.get(key) ?? 0) + times;
      return {
        source_id: input.sourceId,
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
        attempts,
        next_retry_at: input.retryable ? new Date(now.getTime() + this.retryDelayMs(attempts)) : null,
        payload: input.payload ? JSON.stringify(input.payload) : null,
        run_id: input.runId ?? null,
        last_failed_at: now,
      };
    });
    await this.db
      .insertInto('failures')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['source_id', 'kind', 'source_key'])
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
            attempts: eb.ref('excluded.attempts'),
            next_retry_at: eb.ref('excluded.next_retry_at'),
            payload: eb.ref('excluded.payload'),
            run_id: eb.ref('excluded.run_id'),
            last_failed_at: eb.ref('excluded.last_failed_at'),
          })),
      )
      .execute();
  }

  /** `kind:sourceKey` of every open failure of a source: a pass resolves only those, at no cost otherwise. */
  async openKeys(sourceId: string): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom('failures')
      .select(['kind', 'source_key'])
      .where('source_id', '=', sourceId)
      .where('resolved_at', 'is', null)
      .execute();
    return new Set(rows.map((r) => `${r.kind}:${r.source_key}`));
  }

  async resolve(sourceId: string, kind: RecordKind, sourceKeys: readonly string[]): Promise<void> {
    if (sourceKeys.length === 0) return;
    await this.db
      .updateTable('failures')
      .set({ resolved_at: new Date() })
      .where('source_id', '=', sourceId)
      .where('kind', '=', kind)
      .where('source_key', 'in', [...sourceKeys])
      .where('resolved_at', 'is', null)
      .execute();
  }

  /** Open failures of a source, counted in the database. */
  async countOpen(sourceId: string): Promise<number> {
    const row = await this.db
      .selectFrom('failures')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('source_id', '=', sourceId)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async open(
    filter: { sourceId?: string | undefined; kind?: RecordKind; sourceKeys?: readonly string[] } = {},
  ): Promise<FailureRow[]> {
    let query = this.db.selectFrom('failures').selectAll().where('resolved_at', 'is', null);
    if (filter.sourceId) query = query.where('source_id', '=', filter.sourceId);
    if (filter.kind) query = query.where('kind', '=', filter.kind);
    if (filter.sourceKeys) {
      if (filter.sourceKeys.length === 0) return [];
      query = query.where('source_key', 'in', [...filter.sourceKeys]);
    }
    const rows = await query.orderBy('source_id').orderBy('kind').orderBy('source_key').execute();
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
