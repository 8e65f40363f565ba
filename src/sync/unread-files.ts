import type { Logger } from 'pino';
import { messageOf } from '../domain/errors.js';
import { KIND_OF_STREAM, type RecordKind } from '../domain/records.js';
import { type FailureInput, FILE_FAILURE_STAGE, type RunRejectedFile } from '../domain/sync-state.js';
import { storableCopy } from '../domain/text.js';
import type { UnreadUnit } from '../sources/source-description.js';
import type { SyncState } from './ports.js';
import type { SourceSummary } from './run-sync.js';

/**
 * What a pass did with whole files, beyond their rows: a file it could not read (its encoding, its
 * header, a required column missing: set aside in `rejected/`) is kept with the run
 * (`counts.rejectedFiles`, which `status` and the dashboard show) and recorded as a file-level
 * failure (stage `file`, keyed by the file's name, which `failures` lists and alerts count); a file
 * of that name read to its end later resolves it.
 *
 * Called by `SyncService` once `runSync` returned (or stopped); `runSync` marks such a run `partial`.
 */
export interface UnreadFilesProps {
  state: Pick<SyncState, 'failures' | 'runs'>;
  logger: Logger;
  /** Where the source set a unit aside and the kind it was taken for (`SourceDescription.unreadUnit`). */
  unreadUnit(name: string): UnreadUnit | null;
}

/**
 * Keeps the units a pass could not read with its run and opens their file-level failures. A dry run
 * (no run) records nothing.
 */
export async function recordUnreadFiles(props: UnreadFilesProps, summary: SourceSummary): Promise<void> {
  const { runId } = summary;
  if (runId === null) return;
  // Files no pattern takes: named with the run, so a run that took nothing does not read as all
  // well in `status` alone.
  const ignored = summary.ignored ?? [];
  if (ignored.length > 0) await props.state.runs.addToCounts(runId, storableCopy({ ignoredFiles: ignored }));
  // Files still being written: a run that found only those says so, rather than "succeeded 0/0/0/0".
  if (summary.waiting)
    await props.state.runs.addToCounts(runId, storableCopy({ waitingFiles: summary.waiting }));
  if (summary.abandoned.length === 0) return;
  const rejected: RunRejectedFile[] = summary.abandoned.map((a) => ({ file: a.unit, reason: a.reason }));
  await props.state.runs.addToCounts(runId, storableCopy({ rejectedFiles: rejected }));
  const inputs: FailureInput[] = [];
  for (const { unit, reason, stream, place: where } of summary.abandoned) {
    // Where the source says it put the file, else where its description expects it.
    const place =
      stream === undefined ? props.unreadUnit(unit) : { kind: KIND_OF_STREAM[stream], file: where ?? unit };
    if (place === null) continue;
    inputs.push(
      storableCopy({
        sourceId: summary.sourceId,
        kind: place.kind,
        sourceKey: unit,
        stage: FILE_FAILURE_STAGE,
        message: reason,
        status: null,
        apiCode: null,
        file: place.file,
        line: null,
        column: null,
        retryable: false,
        payload: null,
        runId,
      }),
    );
  }
  if (inputs.length > 0) await props.state.failures.recordMany(inputs);
}

/**
 * Resolves the file-level failures of the files a pass read to its end (synced, its rows recorded,
 * or recognised as content synced before): `read` are the units the pass started, less those it
 * could not read. Called only for a pass that ran to its end.
 */
export async function resolveReadFiles(
  props: UnreadFilesProps,
  summary: SourceSummary,
  started: readonly string[],
): Promise<void> {
  if (summary.runId === null) return;
  const unread = new Set(summary.abandoned.map((a) => a.unit));
  const byKind = new Map<RecordKind, string[]>();
  for (const name of started) {
    if (unread.has(name)) continue;
    const place = props.unreadUnit(name);
    if (place === null) continue;
    byKind.set(place.kind, [...(byKind.get(place.kind) ?? []), name]);
  }
  for (const [kind, names] of byKind)
    await props.state.failures.resolve(summary.sourceId, kind, names, { only: FILE_FAILURE_STAGE });
}

/**
 * Both, for a pass's summary, never throwing: the pass's own outcome stands whatever the state DB
 * does here (a failure not recorded is logged; the run and its summary still name the file).
 */
export async function settleUnreadFiles(
  props: UnreadFilesProps,
  summary: SourceSummary,
  started: readonly string[] | null,
): Promise<void> {
  try {
    await recordUnreadFiles(props, summary);
    if (started !== null) await resolveReadFiles(props, summary, started);
  } catch (error) {
    props.logger.error(
      { sourceId: summary.sourceId, runId: summary.runId, reason: messageOf(error) },
      'the files the pass could not read are not recorded as failures',
    );
  }
}
