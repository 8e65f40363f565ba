import type { Selectable } from 'kysely';
import type { StateDb } from './database.js';
import type { FailuresTable, RecordKind } from './schema.js';

export interface FailureInput {
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  /** Where it failed: `validate`, `lookup`, `create`, `update`, `tags`, `patch`, `account`. */
  stage: string;
  message: string;
  status?: number | null;
  apiCode?: string | null;
  file?: string | null;
  line?: number | null;
  column?: string | null;
  /** Transient (worth retrying as is) vs permanent (needs a data or remote fix first). */
  retryable: boolean;
  payload?: Record<string, unknown> | null;
  runId?: string | null;
}

export interface FailureRow {
  id: string;
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  stage: string;
  status: number | null;
  apiCode: string | null;
  message: string;
  file: string | null;
  line: number | null;
  column: string | null;
  retryable: boolean;
  attempts: number;
  nextRetryAt: Date | null;
  payload: Record<string, unknown> | null;
  firstFailedAt: Date;
  lastFailedAt: Date;
}

/** Records that failed, one open failure per record; resolved when the record later syncs. */
export class FailuresRepository {
  constructor(
    private readonly db: StateDb,
    private readonly retryDelayMs: (attempts: number) => number = (n) =>
      Math.min(3600_000, 60_000 * 2 ** (n - 1)),
  ) {}

  async record(input: FailureInput): Promise<void> {
    const now = new Date();
    const open = await this.db
      .selectFrom('failures')
      .select(['id', 'attempts'])
      .where('source_id', '=', input.sourceId)
      .where('kind', '=', input.kind)
      .where('source_key', '=', input.sourceKey)
      .where('resolved_at', 'is', null)
      .executeTakeFirst();
    const attempts = (open?.attempts ?? 0) + 1;
    const values = {
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
    if (open) {
      await this.db.updateTable('failures').set(values).where('id', '=', open.id).execute();
    } else {
      await this.db
        .insertInto('failures')
        .values({ source_id: input.sourceId, kind: input.kind, source_key: input.sourceKey, ...values })
        .execute();
    }
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
