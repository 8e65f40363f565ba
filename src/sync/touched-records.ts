import type { RecordKind } from '../domain/records.js';
import type { Outcome } from './outcome.js';
import type { RunRecordStore, TouchedRecord } from './ports.js';

/**
 * What a pass did to its records, collected through one engine batch and written at its end in one
 * call (`flush`): the run's page lists them. Unchanged records are not kept (a re-run of a large
 * source writes nothing here), nor anything of a dry run (it has no run).
 */
export class TouchedRecords {
  #pending: TouchedRecord[] = [];

  constructor(
    private readonly store: RunRecordStore,
    private readonly sourceId: string,
    private readonly runId: string | null,
  ) {}

  add(kind: RecordKind, sourceKey: string, outcome: Outcome): void {
    if (this.runId === null || outcome === 'unchanged') return;
    this.#pending.push({ kind, sourceKey, outcome });
  }

  /** Writes what was collected since the last call (nothing when nothing was). */
  async flush(): Promise<void> {
    if (this.runId === null || this.#pending.length === 0) return;
    const records = this.#pending;
    this.#pending = [];
    await this.store.record(this.runId, this.sourceId, records);
  }
}
