import type { RecordKind } from '../domain/records.js';
import type { StateDb } from './database.js';
import { type StateScopes, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';

/** The drifted records a reconciliation row keeps (the counts have them all). */
export const KEPT_ITEMS = 500;

/** A reconciliation's result as stored (structurally the reconcile port's `ReconciliationResult`). */
export interface StoredReconciliationResult {
  counts: Record<string, Record<string, number>>;
  items: ReadonlyArray<object>;
  drift: number;
  repairs: Record<string, number>;
  requests: number;
}

/** One reconciliation of one source, as the dashboard and the metrics read it. */
export interface ReconciliationRow {
  id: string;
  sourceId: string;
  trigger: string;
  repair: boolean;
  status: 'running' | 'done' | 'failed';
  startedAt: Date;
  finishedAt: Date | null;
  drift: number;
  counts: Record<string, Record<string, number>>;
  items: Array<Record<string, unknown>>;
  itemsTotal: number;
  repairs: Record<string, number>;
  requests: number;
  error: string | null;
}

/**
 * The reconciliations of each source (migration 0006), and what a reconciliation reads of the
 * state DB: the record map of a source, the failures a repair recorded for held records.
 */
export class ReconciliationsRepository {
  constructor(
    private readonly db: StateDb,
    /** The record map and failures of a source are read in its scope (state/scopes.ts). */
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
  ) {}

  async start(sourceId: string, trigger: string, repair: boolean): Promise<string> {
    const row = await this.db
      .insertInto('reconciliations')
      .values({ source_id: sourceId, trigger, repair, status: 'running', started_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return String(row.id);
  }

  async finish(id: string, result: StoredReconciliationResult): Promise<void> {
    await this.db
      .updateTable('reconciliations')
      .set({
        status: 'done',
        finished_at: new Date(),
        drift: result.drift,
        counts: JSON.stringify(result.counts),
        items: JSON.stringify(result.items.slice(0, KEPT_ITEMS)),
        items_total: result.items.length,
        repairs: JSON.stringify(result.repairs),
        requests: result.requests,
      })
      .where('id', '=', id)
      .execute();
  }

  async fail(id: string, error: string, requests: number): Promise<void> {
    await this.db
      .updateTable('reconciliations')
      .set({ status: 'failed', finished_at: new Date(), error, requests })
      .where('id', '=', id)
      .execute();
  }

  /** The latest reconciliation of each source (or of one), for the dashboard's card and `/metrics`. */
  async latest(sourceId?: string): Promise<ReconciliationRow[]> {
    let query = this.db
      .selectFrom('reconciliations')
      .selectAll()
      .distinctOn('source_id')
      .orderBy('source_id')
      .orderBy('id', 'desc');
    if (sourceId) query = query.where('source_id', '=', sourceId);
    return (await query.execute()).map(toRow);
  }

  /** The last reconciliations of a source, latest first. */
  async recent(sourceId: string, limit = 20): Promise<ReconciliationRow[]> {
    const rows = await this.db
      .selectFrom('reconciliations')
      .selectAll()
      .where('source_id', '=', sourceId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRow);
  }

  async get(id: string): Promise<ReconciliationRow | undefined> {
    const row = await this.db
      .selectFrom('reconciliations')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRow(row);
  }

  /** The record map of a source, every kind, in key order. */
  async mapEntries(sourceId: string): Promise<
    Array<{
      kind: RecordKind;
      sourceKey: string;
      apiId: string;
      syncedState: Record<string, unknown>;
      record: Record<string, unknown> | null;
    }>
  > {
    const rows = await this.db
      .selectFrom('record_map')
      .select(['kind', 'source_key', 'api_id', 'synced_state', 'record'])
      .where(sourceInScope(this.scopes, sourceId))
      .orderBy('kind')
      .orderBy('source_key')
      .execute();
    return rows.map((r) => ({
      kind: r.kind,
      sourceKey: r.source_key,
      apiId: r.api_id,
      syncedState: r.synced_state,
      record: r.record,
    }));
  }

  /** The open failures recorded by reconciliations (stage `reconcile`): the held records. */
  async heldFailures(sourceId: string): Promise<Array<{ kind: RecordKind; sourceKey: string }>> {
    const rows = await this.db
      .selectFrom('failures')
      .select(['kind', 'source_key'])
      .where(sourceInScope(this.scopes, sourceId))
      .where('stage', '=', 'reconcile')
      .where('resolved_at', 'is', null)
      .execute();
    return rows.map((r) => ({ kind: r.kind, sourceKey: r.source_key }));
  }
}

type Selected = {
  id: string;
  source_id: string;
  trigger: string;
  repair: boolean;
  status: ReconciliationRow['status'];
  started_at: Date;
  finished_at: Date | null;
  drift: number;
  counts: Record<string, Record<string, number>>;
  items: Array<Record<string, unknown>>;
  items_total: number;
  repairs: Record<string, number>;
  requests: number;
  error: string | null;
};

function toRow(r: Selected): ReconciliationRow {
  return {
    id: String(r.id),
    sourceId: r.source_id,
    trigger: r.trigger,
    repair: r.repair,
    status: r.status,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    drift: r.drift,
    counts: r.counts,
    items: r.items,
    itemsTotal: r.items_total,
    repairs: r.repairs,
    requests: r.requests,
    error: r.error,
  };
}
