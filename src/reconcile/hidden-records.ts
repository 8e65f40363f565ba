import type { RecordKind } from '../domain/records.js';
import type { RecordMapStore, SyncState } from '../sync/ports.js';

/**
 * The sync engine's state with some records hidden from its record map until the engine saves
 * them again: for a replay, they are records it does not know, so it looks them up on the service
 * by their source id (its lookups in batches of 50) and then adopts what it finds (the record map
 * then points at the found id, and what differs is updated or patched) or creates what it does not
 * (with an Idempotency-Key stored as a pending write first). Nothing is deleted from the record
 * map: a repair cut short leaves the entries as they were, found again by the next reconciliation.
 */
export function hidingRecords(
  state: SyncState,
  sourceId: string,
  hidden: Iterable<[RecordKind, string]>,
): SyncState {
  const keys = new Map<RecordKind, Set<string>>();
  for (const [kind, key] of hidden) {
    const set = keys.get(kind) ?? new Set<string>();
    set.add(key);
    keys.set(kind, set);
  }
  const isHidden = (source: string, kind: RecordKind, key: string) =>
    source === sourceId && (keys.get(kind)?.has(key) ?? false);
  const inner = state.recordMap;
  const recordMap: RecordMapStore = {
    async diff(source, kind, fingerprints) {
      const shown = new Map([...fingerprints].filter(([key]) => !isHidden(source, kind, key)));
      const result = await inner.diff(source, kind, shown);
      for (const key of fingerprints.keys()) if (isHidden(source, kind, key)) result.unknown.add(key);
      return result;
    },
    async getMany(source, kind, wanted) {
      const found = await inner.getMany(source, kind, wanted);
      for (const key of [...found.keys()]) if (isHidden(source, kind, key)) found.delete(key);
      return found;
    },
    async save(source, kind, record, runId, options) {
      await inner.save(source, kind, record, runId, options);
      if (source === sourceId) keys.get(kind)?.delete(record.sourceKey);
    },
    setFingerprints: (source, kind, fingerprints) => inner.setFingerprints(source, kind, fingerprints),
    countUpTo: (source, kind, max) => inner.countUpTo(source, kind, max),
    linkedKeysPage: (source, kind, after, limit) => inner.linkedKeysPage(source, kind, after, limit),
    countLinked: (source, kind) => inner.countLinked(source, kind),
    // No snapshot of fingerprints: it would vouch for hidden records as unchanged.
    fingerprints: async () => null,
    storedRecords: (source, filter) => inner.storedRecords(source, filter),
    resetHash: (source, kind, wanted) => inner.resetHash(source, kind, wanted),
    resetHashes: (source) => inner.resetHashes(source),
    maintainIfGrown: () => inner.maintainIfGrown(),
  };
  return { ...state, recordMap };
}
