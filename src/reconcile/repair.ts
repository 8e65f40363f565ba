import type { Logger } from 'pino';
import { messageOf } from '../domain/errors.js';
import type { RecordKind, SourceRecord } from '../domain/records.js';
import { RECONCILE_STAGE } from '../sync/batch-execution.js';
import type { SyncApi, SyncState } from '../sync/ports.js';
import { type ReplayItem, replaySource } from '../sync/replay-source.js';
import { runSync } from '../sync/run-sync.js';
import { hidingRecords } from './hidden-records.js';
import type { ReconcileApi, ReconcileFailures } from './ports.js';
import { describe, keyOf, planRepairs } from './repair-plan.js';
import type { DriftItem, MapEntry } from './types.js';

export interface RepairDriftProps {
  target: { id: string; connectionId: string; deleteOrphans: boolean };
  api: ReconcileApi;
  failures: ReconcileFailures;
  engine: { api: SyncApi; state: SyncState; concurrency?: number };
  logger: Logger;
  entries: readonly MapEntry[];
  items: DriftItem[];
}

const isRecord = (value: unknown): value is SourceRecord =>
  typeof value === 'object' && value !== null && 'kind' in value && 'sourceId' in value;

/**
 * Repairs what the API allows (docs/reconcile.md, "Repair"):
 * - missing, unresolved and changed records, and orphans a stored record claims (an open failure's),
 *   are replayed through the sync engine from their last synced version, hidden from its record
 *   map: it looks each up by source id, adopts what it finds (updating or patching what differs)
 *   and creates what it does not, with its Idempotency-Keys and pending writes;
 * - orphan accounts no row claims are unlinked when `reconcile.deleteOrphans` allows it;
 * - the rest (read-only, frozen fields, orphans nothing may remove) is recorded as a failure
 *   (stage `reconcile`) with the reason.
 * Returns the records left (held ones `acknowledged`) and what was done, by action.
 */
export async function repairDrift(
  props: RepairDriftProps,
): Promise<{ remaining: DriftItem[]; repairs: Record<string, number> }> {
  const { target, items } = props;
  const records = await replayableRecords(props);
  const plan = planRepairs({
    items,
    deleteOrphans: target.deleteOrphans,
    replayable: new Set(records.keys()),
  });
  const repairs = { recreatedOrAdopted: 0, updated: 0, unlinked: 0, recordedAsFailure: 0, failed: 0 };
  const failedKeys = new Map<string, string>();

  if (plan.replay.length > 0) {
    const replay: ReplayItem[] = plan.replay.map((i) => ({
      record: records.get(keyOf(i.kind, i.sourceKey))!,
      origin: {},
    }));
    const hidden: Array<[RecordKind, string]> = plan.replay
      .filter((i) => i.category !== 'orphan')
      .map((i) => [i.kind, i.sourceKey]);
    await runSync({
      source: replaySource(target.id, 'reconcile repair', replay),
      connectionId: target.connectionId,
      api: props.engine.api,
      state: hidingRecords(props.engine.state, target.id, hidden),
      logger: props.logger,
      trigger: 'reconcile',
      ...(props.engine.concurrency ? { concurrency: props.engine.concurrency } : {}),
    });
    // What the engine could not do is an open failure of the record now (with its API status and code).
    for (const kind of ['account', 'invoice', 'creditNote'] as const) {
      const keys = plan.replay.filter((i) => i.kind === kind).map((i) => i.sourceKey);
      if (keys.length === 0) continue;
      for (const f of await props.failures.open({ sourceId: target.id, kind, sourceKeys: keys }))
        failedKeys.set(keyOf(kind, f.sourceKey), f.message);
    }
    for (const item of plan.replay) {
      if (failedKeys.has(keyOf(item.kind, item.sourceKey))) {
        repairs.failed++;
        continue;
      }
      item.repairedBy = 'replayed';
      if (item.category === 'changed') repairs.updated++;
      else repairs.recreatedOrAdopted++;
    }
  }

  for (const item of plan.unlink) {
    try {
      await props.api.unlinkAccountSource(item.foundId!);
      item.repairedBy = 'unlinked';
      repairs.unlinked++;
    } catch (error) {
      failedKeys.set(keyOf(item.kind, item.sourceKey), messageOf(error));
      repairs.failed++;
    }
  }

  for (const { item, reason } of plan.fail) {
    await props.failures.record({
      sourceId: target.id,
      kind: item.kind,
      sourceKey: item.sourceKey,
      stage: RECONCILE_STAGE,
      message: reason,
      retryable: false,
    });
    item.acknowledged = true;
    repairs.recordedAsFailure++;
    props.logger.warn({ event: 'reconcile.held', kind: item.kind, sourceKey: item.sourceKey }, reason);
  }

  const replayed = new Set(plan.replay.map((i) => keyOf(i.kind, i.sourceKey)));
  const unlinked = new Set(plan.unlink.map((i) => keyOf(i.kind, i.sourceKey)));
  const remaining = items.filter((item) => {
    const key = keyOf(item.kind, item.sourceKey);
    if (item.acknowledged) return true;
    if (failedKeys.has(key)) {
      item.reason = `${item.reason ? `${item.reason}; ` : ''}repair failed: ${failedKeys.get(key)}`;
      props.logger.warn(
        { event: 'reconcile.repair-failed', kind: item.kind },
        `${describe(item)}: ${item.reason}`,
      );
      return true;
    }
    return !(replayed.has(key) || unlinked.has(key));
  });
  return { remaining, repairs };
}

/**
 * The records a replay can send, by `kind:key`: the record map's last synced versions, and the
 * stored records of open failures of the orphans' source ids (a row that failed after its write
 * took effect: the service holds it, the record map does not).
 */
async function replayableRecords(props: RepairDriftProps): Promise<Map<string, SourceRecord>> {
  const found = new Map<string, SourceRecord>();
  for (const e of props.entries) if (isRecord(e.record)) found.set(keyOf(e.kind, e.sourceKey), e.record);
  for (const kind of ['account', 'invoice', 'creditNote'] as const) {
    const orphans = props.items
      .filter((i) => i.category === 'orphan' && i.kind === kind)
      .map((i) => i.sourceKey);
    if (orphans.length === 0) continue;
    for (const f of await props.failures.open({ sourceId: props.target.id, kind, sourceKeys: orphans })) {
      const record = f.payload?.record;
      if (isRecord(record) && record.kind === kind) found.set(keyOf(kind, f.sourceKey), record);
    }
  }
  return found;
}
