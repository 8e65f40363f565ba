import type { CursorValue } from '../domain/records.js';
import type { StateDb } from './database.js';
import { type StateScopes, scopeColumns, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

export type { CursorValue };

export interface StreamCursor {
  sourceId: string;
  stream: string;
  /** null: reset; the next pass reads the stream from its start. */
  cursor: CursorValue | null;
  /** When it was last advanced or reset. */
  updatedAt: Date;
}

/**
 * The `cursors` table: one row per source and stream, within the source's scope (see
 * `state/scopes.ts`: a cursor was read for one organization). A source advances its cursor only
 * once a unit is complete (every record synced or recorded as a failure); `reset` makes the next
 * pass read a stream (or all of a source's) from the start, leaving the other streams as they are.
 *
 * What a lost connection does to each statement (see `StateCalls`): the reads and `set` (an upsert
 * of the value the caller holds) are `retried`. `reset` runs `once`: its answer is the streams whose
 * cursor it cleared, and an attempt again after one that took effect would clear none and say so.
 */
export class CursorsRepository {
  /** `calls`: how statements run (default `StateCalls.direct`; `syncStateRepos` passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  async get(sourceId: string, stream: string): Promise<CursorValue | null> {
    const row = await this.calls.retried('cursors.get', () =>
      this.db
        .selectFrom('cursors')
        .select('cursor')
        .where(sourceInScope(this.scopes, sourceId))
        .where('stream', '=', stream)
        .executeTakeFirst(),
    );
    return row?.cursor ?? null;
  }

  async set(sourceId: string, stream: string, cursor: CursorValue): Promise<void> {
    const value = JSON.stringify(cursor);
    const updatedAt = new Date();
    await this.calls.retried('cursors.set', () =>
      this.db
        .insertInto('cursors')
        .values({ ...scopeColumns(this.scopes, sourceId), stream, cursor: value, updated_at: updatedAt })
        .onConflict((oc) =>
          oc
            .columns(['connection_id', 'organization_id', 'source_id', 'stream'])
            .doUpdateSet({ cursor: value, updated_at: updatedAt }),
        )
        .execute(),
    );
  }

  /**
   * Forgets the cursor of one stream, or of every stream of the source when `stream` is omitted.
   * The rows stay (cursor null, `updatedAt` = the reset) so `status` shows when it happened.
   * Returns the streams whose cursor was set before.
   */
  async reset(sourceId: string, stream?: string): Promise<string[]> {
    let query = this.db
      .updateTable('cursors')
      .set({ cursor: null, updated_at: new Date() })
      .where(sourceInScope(this.scopes, sourceId))
      .where('cursor', 'is not', null);
    if (stream !== undefined) query = query.where('stream', '=', stream);
    const rows = await this.calls.once('cursors.reset', () => query.returning('stream').execute());
    return rows.map((r) => r.stream).sort();
  }

  /**
   * The cursors of a source in its scope (every source, in every scope, when omitted), by source
   * then stream.
   */
  async list(sourceId?: string): Promise<StreamCursor[]> {
    let query = this.db.selectFrom('cursors').selectAll();
    if (sourceId !== undefined) query = query.where(sourceInScope(this.scopes, sourceId));
    const rows = await this.calls.retried('cursors.list', () =>
      query.orderBy('source_id').orderBy('stream').execute(),
    );
    return rows.map((r) => ({
      sourceId: r.source_id,
      stream: r.stream,
      cursor: r.cursor,
      updatedAt: r.updated_at,
    }));
  }
}
