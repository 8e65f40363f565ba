import type { RecordKind } from './records.js';

/**
 * What the state DB keeps of a sync: the vocabulary shared by the sync engine, which declares what
 * it needs from the state in `sync/ports.ts`, and by the state DB's repositories that implement it.
 */

export type { RecordKind };

/** What the state DB knows of one synced record. */
export interface MappedRecord {
  sourceKey: string;
  apiId: string;
  contentHash: string;
  /** The values last written that can still change remotely (paid amount, due date, tags...). */
  syncedState: Record<string, unknown>;
  /** The source record as last synced, for re-syncs on demand. */
  record?: object | undefined;
}

/** A batch compared with the state: only what differs is returned. */
export interface BatchDiff {
  /** Records the state holds with another fingerprint, with what it holds of them (and the record). */
  changed: Map<string, MappedRecord>;
  /** Keys the state does not hold. */
  unknown: Set<string>;
}

export interface FailureInput {
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  /**
   * Where it failed: `validate`, `lookup`, `create`, `update`, `tags`, `patch`, `account`; `file`
   * for a whole file the source could not read (see `FILE_FAILURE_STAGE`).
   */
  stage: string;
  message: string;
  status?: number | null;
  apiCode?: string | null;
  file?: string | null;
  line?: number | null;
  column?: string | null;
  /** Transient (worth retrying as is) vs permanent (needs a data or remote fix first). */
  retryable: boolean;
  payload?: Record<string, unknown> | null;
  runId?: string | null;
}

export interface FailureRow {
  id: string;
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  stage: string;
  status: number | null;
  apiCode: string | null;
  message: string;
  file: string | null;
  line: number | null;
  column: string | null;
  retryable: boolean;
  attempts: number;
  nextRetryAt: Date | null;
  payload: Record<string, unknown> | null;
  firstFailedAt: Date;
  lastFailedAt: Date;
}

/**
 * The stage of a failure that is a whole file the source could not read (its encoding, its header,
 * a required column missing): its key is the file's name, its `file` where it was set aside
 * (`rejected/<name>`), its kind the records the file was taken for. It holds no payload: it is
 * retried by fixing the file (or the source's configuration) and dropping it again, and resolved
 * when a file of that name is read to its end.
 */
export const FILE_FAILURE_STAGE = 'file';

/** A file a run could not read, as the run's counts keep it (`counts.rejectedFiles`). */
export interface RunRejectedFile {
  file: string;
  reason: string;
}

/**
 * The files a run could not read, from its stored counts (JSON written by whatever version ran it:
 * read defensively; none when it holds no `rejectedFiles`).
 */
export function rejectedFilesOf(counts: Readonly<Record<string, unknown>>): RunRejectedFile[] {
  const stored = counts.rejectedFiles;
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((entry): RunRejectedFile[] => {
    const { file, reason } = (entry ?? {}) as { file?: unknown; reason?: unknown };
    return typeof file === 'string' ? [{ file, reason: typeof reason === 'string' ? reason : '' }] : [];
  });
}

/** The files of a drop folder a run left because no kind's pattern matches them (`counts.ignoredFiles`). */
export function ignoredFilesOf(counts: Readonly<Record<string, unknown>>): string[] {
  const stored = counts.ignoredFiles;
  return Array.isArray(stored) ? stored.filter((name): name is string => typeof name === 'string') : [];
}

/** The drop files a run left because they were still being written (`counts.waitingFiles`). */
export interface RunWaitingFiles {
  files: string[];
  /** How long a file must stay unchanged before a pass takes it (the source's `stableSeconds`). */
  stableSeconds: number;
}

/** The files a run left for a later pass, still being written; null when it left none. */
export function waitingFilesOf(counts: Readonly<Record<string, unknown>>): RunWaitingFiles | null {
  const stored = counts.waitingFiles as { files?: unknown; stableSeconds?: unknown } | undefined;
  if (!stored || !Array.isArray(stored.files)) return null;
  const files = stored.files.filter((name): name is string => typeof name === 'string');
  if (files.length === 0) return null;
  const seconds = Number(stored.stableSeconds);
  return { files, stableSeconds: Number.isFinite(seconds) ? seconds : 0 };
}

/**
 * A pass's status: `partial` when some rows failed or a file could not be read, `failed` when it
 * stopped on an error, `cancelled` when a user cancelled it (it stopped before its next batch, the
 * unit under way released: a file back in the drop folder), `interrupted` when its process stopped
 * before it finished (a shutdown that could not wait for it: error `shut down`; a killed or crashed
 * process, found by a later pass).
 */
export type RunStatus = 'running' | 'succeeded' | 'partial' | 'failed' | 'cancelled' | 'interrupted';
