import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import { type RecordKind, STREAM_OF, type Stream } from '../domain/records.js';
import type { DownstreamFailure } from '../sources/source.js';
import type { FingerprintSnapshots } from './fingerprint-snapshot.js';
import type { LookupSwitch } from './lookup-switch.js';
import { emptyCounts, type KindCounts, type Outcome } from './outcome.js';
import type { SyncApi, SyncState } from './ports.js';
import type { LinkedAccounts } from './remote-lookup.js';
import type { TouchedRecords } from './touched-records.js';

/**
 * What the steps of one pass of one source work with, in four parts; each step takes the parts it
 * uses (`PassIdentity & PassPorts` for a pending write, the whole `PassScope` for a batch). Built
 * once per pass by `runSync`; nothing in it is replaced during the pass (the report, the open
 * failure kinds and what the lookups keep change inside).
 */
export interface PassScope extends PassIdentity, PassPorts, PassBookkeeping, PassLookups {}

/** Which pass this is, for whom, and how it runs. */
export interface PassIdentity {
  readonly sourceId: string;
  /** The connectionId of linked account sources (default: the source id). */
  readonly connectionId: string;
  /** The run row of the pass; null for a dry run. */
  readonly runId: string | null;
  readonly dryRun: boolean;
  /** Records written at once within a batch. */
  readonly concurrency: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** Where the pass writes: the API, and the state DB (`sync/ports.ts`). */
export interface PassPorts {
  readonly api: SyncApi;
  readonly state: SyncState;
}

/** What the pass counts and writes down as it goes, batch by batch. */
export interface PassBookkeeping {
  readonly report: PassReport;
  /** The records created, updated or failed in the batch under way, written at its end. */
  readonly touched: TouchedRecords;
  /**
   * The kinds that may have open failures: those open when the pass began, and those failed since.
   * Records of those kinds that sync resolve their failure; any other kind costs no write for it.
   * (Not the keys: a source can have a million open failures.)
   */
  readonly failureKinds: Set<RecordKind>;
}

/** How the pass finds what it does not hold yet: read once, kept for the pass. */
export interface PassLookups {
  /** The record map's fingerprints, read once when a pass is large (see FingerprintSnapshots). */
  readonly snapshots: FingerprintSnapshots;
  /** The service's linked accounts of this connection, listed once when a lookup needs them. */
  readonly linkedAccounts: LinkedAccounts;
  /** Create first, or look records the record map does not know up first (see LookupSwitch). */
  readonly lookups: LookupSwitch;
}

/** A planned operation, as `--dry-run` prints it. */
export interface PlannedOperation {
  kind: RecordKind;
  sourceKey: string;
  operation: string;
  detail?: string;
}

/** A unit as progress shows it: its name, its size when known, and whether it is skipped. */
export interface UnitStart {
  name: string;
  /** About how many records it holds (see `SourceUnit.expectedRecords`). */
  expectedRecords?: number;
  /** Same content as a unit synced before: skipped (see `SourceUnit.duplicateOf`). */
  duplicateOf?: { name: string; syncedAt: Date };
}

export type ProgressEvent =
  | ({ type: 'unit' } & UnitStart)
  | { type: 'records'; read: number; rejected: number }
  | { type: 'outcome'; kind: RecordKind; outcome: Outcome };

/** Failures a pass summary lists; beyond, they are counted (and all are in the state DB). */
export const LISTED_FAILURES = 1_000;

/**
 * What a pass did, as it goes: counts per kind and outcome, the plan of a dry run, the failures of
 * the unit being processed (handed to the source for its report), and progress events.
 */
export class PassReport {
  readonly counts: Record<Stream, KindCounts> = {
    accounts: emptyCounts(),
    invoices: emptyCounts(),
    creditNotes: emptyCounts(),
  };
  readonly plan: PlannedOperation[] = [];
  /** The failures of the pass as the summary lists them (at most `LISTED_FAILURES`). */
  readonly listed: Array<DownstreamFailure & { unit: string }> = [];
  /** The unit's failures not yet handed to it (see `takeUnitFailures`). */
  #unitFailures: DownstreamFailure[] = [];
  #unitFailed = 0;
  #unitFailedAll = 0;
  #unit = '';

  constructor(readonly progress: (event: ProgressEvent) => void = () => {}) {}

  /** A new unit starts: its failures are collected afresh. */
  startUnit(unit: UnitStart): void {
    this.#unitFailures = [];
    this.#unitFailed = 0;
    this.#unitFailedAll = 0;
    this.#unit = unit.name;
    this.progress({ type: 'unit', ...unit });
  }

  /** The failures of the current unit since the last call: handed to the unit, then forgotten here. */
  takeUnitFailures(): DownstreamFailure[] {
    const taken = this.#unitFailures;
    this.#unitFailures = [];
    return taken;
  }

  /** How many records of the current unit failed after the source let them through. */
  get unitFailed(): number {
    return this.#unitFailed;
  }

  /** How many records of the current unit failed in all: refused by the source's checks too. */
  get unitFailedAll(): number {
    return this.#unitFailedAll;
  }

  count(kind: RecordKind, outcome: Outcome): void {
    this.counts[STREAM_OF[kind]][outcome]++;
    this.progress({ type: 'outcome', kind, outcome });
  }

  /** Rows a source knows are synced already (a file dropped again as it was): unchanged. */
  alreadySynced(stream: Stream, rows: number): void {
    this.counts[stream].unchanged += rows;
  }

  /**
   * A record of the unit failed: counted, listed in the pass summary (the first
   * `LISTED_FAILURES`; the rest are counted, and all are in the state DB), and, when it failed after
   * the source let it through (`downstream`), kept for the unit's report. Rows the source refused
   * itself are in its own report already.
   */
  failed(kind: RecordKind, failure: DownstreamFailure, options: { downstream: boolean }): void {
    this.count(kind, 'failed');
    this.#unitFailedAll++;
    if (this.listed.length < LISTED_FAILURES) this.listed.push({ ...failure, unit: this.#unit });
    if (options.downstream) {
      this.#unitFailures.push(failure);
      this.#unitFailed++;
    }
  }

  /** A dry run's planned write; returns the outcome it would have. */
  planned(operation: PlannedOperation, outcome: Outcome): Outcome {
    this.plan.push(operation);
    return outcome;
  }

  /** Whether a dry run of this pass planned this operation (documents count on planned accounts). */
  plans(kind: RecordKind, sourceKey: string): boolean {
    return this.plan.some((p) => p.kind === kind && p.sourceKey === sourceKey);
  }

  /** Whether any record failed in the pass. */
  get anyFailed(): boolean {
    return Object.values(this.counts).some((c) => c.failed > 0);
  }
}
