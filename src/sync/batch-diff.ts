import type { RecordKind, RecordOrigin } from '../domain/records.js';
import type { MappedRecord } from '../domain/sync-state.js';
import type { PassScope } from './pass-scope.js';

/** A batch of one kind as a source gave it. */
export interface BatchItem<R extends { sourceId: string }> {
  record: R;
  origin: RecordOrigin;
}

/** A batch split against the state DB. */
export interface BatchPlan<T> {
  /** Records that are new or changed, in batch order. */
  work: T[];
  /** What the state holds of the changed records among `work`. */
  known: Map<string, MappedRecord>;
  /** Keys among `work` the state does not hold. */
  unknown: string[];
  /** Keys of the records that are unchanged (already counted). */
  unchanged: string[];
}

/**
 * Splits a batch of one kind (distinct keys) by comparing fingerprints with the state DB in one
 * query: unchanged records are counted there and cost nothing more. A record whose stored
 * fingerprint differs but whose stored record has the same fingerprint (one kept from a version
 * that fingerprinted records otherwise) is unchanged too: its fingerprint is rewritten, no API call.
 * A fingerprint reset on purpose (a full re-sync stores '') always leads to the comparison.
 */
export async function diffBatch<R extends { sourceId: string }, T extends BatchItem<R>>(
  scope: PassScope,
  kind: RecordKind,
  items: readonly T[],
  fingerprintOf: (record: R) => string,
): Promise<BatchPlan<T>> {
  await scope.snapshots.observe(kind, items.length);
  const plan: BatchPlan<T> = { work: [], known: new Map(), unknown: [], unchanged: [] };
  // Fingerprints the snapshot cannot vouch for are compared with the state DB.
  const fingerprints = new Map<string, string>();
  for (const item of items) {
    const key = item.record.sourceId;
    const fingerprint = fingerprintOf(item.record);
    if (scope.snapshots.unchanged(kind, key, fingerprint)) plan.unchanged.push(key);
    else fingerprints.set(key, fingerprint);
  }
  const diff = await scope.state.recordMap.diff(scope.sourceId, kind, fingerprints);
  plan.known = diff.changed;
  plan.unknown = [...diff.unknown];
  const refreshed = new Map<string, string>();
  for (const item of items) {
    const key = item.record.sourceId;
    const wanted = fingerprints.get(key);
    if (wanted === undefined) continue;
    const held = diff.changed.get(key);
    if (diff.unknown.has(key)) plan.work.push(item);
    else if (held === undefined) plan.unchanged.push(key);
    else if (held.contentHash !== '' && storedFingerprint(held.record, fingerprintOf) === wanted) {
      refreshed.set(key, wanted);
      plan.unchanged.push(key);
    } else plan.work.push(item);
  }
  if (!scope.dryRun) await scope.state.recordMap.setFingerprints(scope.sourceId, kind, refreshed);
  scope.snapshots.forget(kind, refreshed.keys());
  for (const _ of plan.unchanged) scope.report.count(kind, 'unchanged');
  return plan;
}

/** The fingerprint of the record stored beside a record map row, or null when none can be made. */
function storedFingerprint<R>(
  record: object | undefined,
  fingerprintOf: (record: R) => string,
): string | null {
  if (record === undefined) return null;
  try {
    return fingerprintOf(record as R);
  } catch {
    // A stored record of an unexpected shape: compare the record the usual way.
    return null;
  }
}
