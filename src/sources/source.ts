import type { RecordOrigin, RowProblem, SourceRecord, Stream } from '../domain/records.js';

/** A batch of records read from a source, with the rows it refused. */
export interface SourceBatch {
  records: Array<{ record: SourceRecord; origin: RecordOrigin }>;
  rejected: RowProblem[];
}

/** A row of a unit that failed after the source let it through (API refusal, missing account...). */
export interface DownstreamFailure {
  origin: RecordOrigin;
  sourceKey: string;
  column?: string;
  reason: string;
}

/**
 * One piece of work of a source, handled as a whole: a CSV file, a SQL stream since its cursor.
 * The engine drains `batches()`, then calls `complete` (or `abandon` when it could not finish).
 */
export interface SourceUnit {
  /** Shown in progress and reports: the file name, `billing-db/invoices`, ... */
  name: string;
  /**
   * The kind the unit was taken as (a CSV file by its name, a SQL stream). Its records may be of
   * other kinds too, in dependency order within each batch: a file of invoices may hold credit
   * notes and name its accounts (the engine syncs a batch's accounts before its documents).
   */
  stream: Stream;
  /**
   * The unit's records. The engine reads one batch ahead (it asks for the next one while handling
   * the current one): being asked for a batch acknowledges nothing; `complete` does.
   */
  batches(): AsyncIterable<SourceBatch>;
  /**
   * The failures of one batch, once the engine processed it (before it asks for the next): a unit
   * that takes them here gets none in `complete`, so a unit of a million failed rows costs it no
   * memory (the CSV source spools them for the report; the SQL source has no use for them). A unit
   * without it gets them all in `complete`.
   */
  failed?(failures: readonly DownstreamFailure[]): Promise<void>;
  /**
   * Every record was synced or recorded as a failure: archive the file and write the report,
   * or advance the cursor to `cursor` (opaque, source-defined). `failures`: those not given to
   * `failed` (the rows the source refused itself are not among them: it has them).
   */
  complete(outcome: UnitOutcome): Promise<void>;
  /**
   * Rows the source knows are synced already and hands out no record for (a file dropped again with
   * the same content): counted as unchanged in the pass summary.
   */
  readonly alreadySynced?: number;
  /**
   * About how many records the unit holds, when the source can tell before reading it (a CSV file
   * counts its lines, so a quoted line break counts one more): for a progress estimate only.
   */
  readonly expectedRecords?: number;
  /**
   * The unit's content was synced before, as `name` (a file dropped again as it was): it hands out
   * no record (its rows are `alreadySynced`), and the pass summary says it was skipped.
   */
  readonly duplicateOf?: { name: string; syncedAt: Date };
  /** What the user should know about the unit as a whole (a CSV header's unknown columns), if any. */
  readonly warnings?: readonly string[];
  /**
   * Rows the unit held that are no records and no failures (a report's totals and footers, rows of
   * a kind the source does not sync): known once `batches()` is drained, counted in the summary.
   */
  readonly skippedRows?: number;
  /**
   * Set when the unit is the whole set of its stream (a CSV file in snapshot mode): once it was
   * read in full, the records of the stream synced before that it no longer holds are deleted in
   * the source (see `UnitSnapshot`).
   */
  readonly snapshot?: UnitSnapshot;
  /** The unit could not be read (unreadable file, broken SQL): move it aside with the reason. */
  abandon(reason: string): Promise<void>;
  /** A dry run read the unit without syncing it: put it back untouched for the next real pass. */
  release(): Promise<void>;
}

/** What the engine hands to `SourceUnit.complete`. */
export interface UnitOutcome {
  /** The failures not handed over batch by batch through `failed`. */
  failures: readonly DownstreamFailure[];
  /**
   * What the pass found about the unit as a whole after reading it (a snapshot's deletions, held
   * or applied), for the unit's own report.
   */
  notes?: readonly string[];
}

/**
 * A unit that is the whole set of its stream. The engine asks it, after `batches()` was drained,
 * which of the keys the record map holds it did not hold; those are the stream's deletions.
 */
export interface UnitSnapshot {
  /** Accounts: unlink their source, add `deletedTag`, or only report them; documents: `skip`. */
  readonly onDelete: 'unlink' | 'tag' | 'skip';
  readonly deletedTag: string;
  /** More absent records than this share of the stream's linked ones: none is deleted (held). */
  readonly maxDeleteRatio: number;
  /** Whether the unit held a row of this key (a row it refused counts: it is still there). */
  holds(key: string): boolean;
  /** Why the unit cannot vouch for what it lacks (it was not read whole), or null. */
  incomplete(): string | null;
}

/**
 * The source port, in the spirit of Singer: a source emits records plus an opaque state it alone
 * understands. Units come in stream order: accounts, then invoices, then credit notes.
 */
export interface Source {
  readonly id: string;
  readonly type: string;
  units(signal?: AbortSignal): AsyncIterable<SourceUnit>;
  /**
   * What the latest pass saw but left for a later one because it was not complete yet (a drop
   * file still being written, modified less than `stableSeconds` ago): their names, and how long a
   * file must be left unchanged to be taken.
   */
  waiting?(): { files: readonly string[]; stableSeconds: number };
  /**
   * What the latest pass did with files it never handed out as units, and what it met on the way:
   * the pass summary reports them beside its units (see `SourceNotices`).
   */
  notices?(): SourceNotices;
}

/** A unit the source set aside unread, with why; where it put it and its kind when it knows. */
export interface RefusedUnit {
  unit: string;
  reason: string;
  /** The kind it was taken for. */
  stream?: Stream;
  /** Where it was put, relative to the source's folder (`rejected/invoices~2.csv`); null: left where it was. */
  place?: string | null;
}

/** What a source reports of a pass beyond its units. */
export interface SourceNotices {
  /**
   * Files set aside unread, with why (a CSV file rejected for its header, a link planted where its
   * report was to go): reported as the units a pass could not read.
   */
  refused: ReadonlyArray<RefusedUnit>;
  /** What the user should know about a file (a link planted in the drop folder, gone around). */
  warnings: ReadonlyArray<{ unit: string; warning: string }>;
  /** What the source saw and takes for nothing (drop files whose names match no kind): named. */
  ignored?: readonly string[];
}

/** The keys of the records of a stream: the contract's `sourceId`. */
export const keyOf = (record: SourceRecord): string => record.sourceId;
