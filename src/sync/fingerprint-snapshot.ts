import type { Logger } from 'pino';
import type { RecordKind } from '../domain/records.js';
import type { RecordMapStore } from './ports.js';

/** When a pass reads a snapshot of the record map's fingerprints instead of asking per batch. */
export interface SnapshotPolicy {
  /** Records of a kind a pass must have read before a snapshot is considered (default 1,000). */
  minRows: number;
  /**
   * A snapshot is read only while the record map holds at most this many times the records the
   * pass has read of that kind (default 8): reading a fingerprint costs about a third of comparing
   * one by query, so in the worst case (the pass ends just after) the snapshot costs a few times
   * what the queries it replaces would have, and a pass that goes on repays it.
   */
  maxRatio: number;
  /** Never hold more fingerprints than this, per kind (default 200,000: about 30 MB). */
  limit: number;
}

export const DEFAULT_SNAPSHOT_POLICY: SnapshotPolicy = { minRows: 1_000, maxRatio: 8, limit: 200_000 };

/**
 * The fingerprints of a source's records, per kind, read once for a large pass: comparing a
 * re-exported file of 100,000 rows then costs one query per kind instead of one per batch of 500
 * (on the embedded database, a per-batch query costs about 4 µs a row; the snapshot, 1 µs a row
 * once and a Map lookup after).
 *
 * It only ever says "unchanged": a record it does not hold, or holds with another fingerprint, is
 * compared with the state DB as usual. Keys written during the pass are dropped from it, so a
 * record that changes twice in one pass is compared with what was written, never with the snapshot.
 * A pass holds one; it is not shared between passes or processes.
 */
export class FingerprintSnapshots {
  readonly #held = new Map<RecordKind, Map<string, string>>();
  readonly #seen: Record<RecordKind, number> = { account: 0, invoice: 0, creditNote: 0 };
  readonly #nextCheck: Record<RecordKind, number>;

  constructor(
    private readonly recordMap: Pick<RecordMapStore, 'countUpTo' | 'fingerprints'>,
    private readonly sourceId: string,
    private readonly logger: Logger,
    private readonly policy: SnapshotPolicy = DEFAULT_SNAPSHOT_POLICY,
  ) {
    this.#nextCheck = { account: policy.minRows, invoice: policy.minRows, creditNote: policy.minRows };
  }

  /**
   * Counts the records of a batch about to be compared, and reads the kind's snapshot once the pass
   * is large next to the record map. Checked at minRows, then each time the count has grown
   * fourfold: a check counts the kind's records no further than the number that would qualify (an
   * index-only count, bounded by the rows read so far), and only then reads the fingerprints. Once
   * the record map is known to hold more than `limit`, no check is made again.
   */
  async observe(kind: RecordKind, rows: number): Promise<void> {
    this.#seen[kind] += rows;
    if (this.#held.has(kind) || this.#seen[kind] < this.#nextCheck[kind]) return;
    this.#nextCheck[kind] = this.#seen[kind] * 4;
    const qualifying = Math.min(this.policy.limit, this.#seen[kind] * this.policy.maxRatio);
    const stored = await this.recordMap.countUpTo(this.sourceId, kind, qualifying + 1);
    if (stored > qualifying) {
      if (qualifying === this.policy.limit) this.#nextCheck[kind] = Number.POSITIVE_INFINITY;
      return;
    }
    if (stored === 0) return;
    const started = performance.now();
    const fingerprints = await this.recordMap.fingerprints(this.sourceId, kind, qualifying);
    if (fingerprints === null) return;
    this.#held.set(kind, fingerprints);
    this.logger.debug(
      { kind, fingerprints: fingerprints.size, ms: Math.round(performance.now() - started) },
      'record map snapshot read',
    );
  }

  /** True when the snapshot holds this key with this fingerprint; false when it cannot tell. */
  unchanged(kind: RecordKind, key: string, fingerprint: string): boolean {
    return this.#held.get(kind)?.get(key) === fingerprint;
  }

  /** Drops keys that were written (or may have been) during the pass. */
  forget(kind: RecordKind, keys: Iterable<string>): void {
    const held = this.#held.get(kind);
    if (held) for (const key of keys) held.delete(key);
  }

  /** Whether a snapshot of this kind is held (for tests and logs). */
  holds(kind: RecordKind): boolean {
    return this.#held.has(kind);
  }
}
