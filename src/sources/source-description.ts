import type { RecordKind, Stream } from '../domain/records.js';

/**
 * What a configured source says of its type, so that no code outside `sources/` and `config/`
 * branches on `type`: `status` and the dashboard ask it what to show, the failures export where its
 * files live, `doctor` how to check it. One implementation per adapter folder
 * (`csv/csv-description.ts`, `sql/sql-description.ts`, `module/module-description.ts`);
 * `describeSource` (describe-source.ts) picks it by config, as `createSourceFactory` picks the adapter.
 */
export interface SourceDescription {
  /**
   * What a list of its cursors says when it has none: `status` on `receivables-sync status`,
   * `page` on the dashboard. A source that keeps no cursor says why; the others say "none yet".
   */
  readonly noCursors: { readonly status: string; readonly page: string };
  /** The streams it is configured with, listed before any of them has a cursor (a SQL source's queries). */
  readonly configuredStreams: readonly Stream[];
  /** Its drop folder as configured, whose files the ledger lists; null: it takes no files. */
  readonly dropDir: string | null;
  /** Header cell -> contract column of the rows it reads; empty when they carry the contract's names. */
  readonly columnMapping: Readonly<Record<string, string>>;
  /** Its own settings as the dashboard's source page lists them (the common keys are shown apart). */
  readonly settings: readonly SettingFact[];
  /** `doctor`'s check of it, writing nothing it keeps. An error it throws is a failed check, its message the detail. */
  check(context: SourceCheckContext): Promise<SourceCheckResult>;
  /**
   * A unit a pass could not read, as its file-level failure names it: the kind of records it was
   * taken for (a CSV file's, by its name) and where it was set aside (`rejected/<name>`). Null when
   * there is no file to fix and drop again (a SQL stream keeps its cursor: the next pass reads it again).
   */
  unreadUnit(name: string): UnreadUnit | null;
}

/** Where a unit a pass could not read was set aside, and the kind of records it was taken for. */
export interface UnreadUnit {
  kind: RecordKind;
  /** Relative to the drop folder: `rejected/invoices.csv`. */
  file: string;
}

import type { SettingFact } from '../domain/setting-facts.js';

export type { SettingFact, SettingPiece } from '../domain/setting-facts.js';

/** What a source's `doctor` check reads besides its configuration. */
export interface SourceCheckContext {
  /** Where a SQL source reads its connection URL (`urlEnv`) and a module source its settings. */
  env: Readonly<Record<string, string | undefined>>;
  /** The configuration file's folder: a module source's specifier is relative to it. */
  baseDir: string;
}

/** How a source's check went, and why (with the fix when it failed); `doctor` names it after the source. */
export interface SourceCheckResult {
  /** `warn`: it works, but something is likely not what was meant (a drop file no kind takes). */
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

export const checkOk = (detail: string): SourceCheckResult => ({ status: 'ok', detail });
export const checkWarned = (detail: string): SourceCheckResult => ({ status: 'warn', detail });
export const checkFailed = (detail: string): SourceCheckResult => ({ status: 'fail', detail });
