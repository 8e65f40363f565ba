import type { Logger } from 'pino';
import { type Clock, systemClock } from '../domain/clock.js';
import { errorCodeOf, errorKindOf, messageOf } from '../domain/errors.js';
import type { Stream } from '../domain/records.js';
import { PassLog, withPassLog } from '../logging/pass-log.js';
import type { DownstreamFailure, RefusedUnit, Source, SourceUnit } from '../sources/source.js';
import { FingerprintSnapshots, type SnapshotPolicy } from './fingerprint-snapshot.js';
import { LookupSwitch } from './lookup-switch.js';
import type { KindCounts } from './outcome.js';
import { processBatch, readAhead } from './pass-batches.js';
import { PassCancelledError } from './pass-cancelled.js';
import { PassReport, type PassScope, type PlannedOperation, type ProgressEvent } from './pass-scope.js';
import { tellPassEnd } from './pass-story.js';
import type { SyncApi, SyncState } from './ports.js';
import { LinkedAccounts } from './remote-lookup.js';
import { applyUnitSnapshot, type SnapshotOutcome } from './snapshot-deletions.js';
import { TagResolver } from './tag-resolver.js';
import { TouchedRecords } from './touched-records.js';
import { PreviewCollector, type UnitPreview } from './unit-preview.js';

export interface RunSyncProps {
  source: Source;
  /** The connectionId of linked account sources (default: the source id). */
  connectionId: string;
  api: SyncApi;
  state: SyncState;
  logger: Logger;
  trigger?: string;
  dryRun?: boolean;
  /** Records written at once within a batch (the API client bounds requests in flight too). */
  concurrency?: number;
  clock?: Clock;
  onProgress?: (event: ProgressEvent) => void;
  /** When a large pass reads the record map's fingerprints at once (default: DEFAULT_SNAPSHOT_POLICY). */
  snapshotPolicy?: SnapshotPolicy;
  /** Asked before each batch and before each unit is completed (not in a dry run): see `PassFence`. */
  fence?: PassFence;
}

/**
 * Whether the pass of run `runId` may go on (the worker's one pass per source, docs/worker.md):
 * resolves, or throws an error that is not `data` (the source lock lost to another job, a later
 * pass of the source started). The pass then stops there as on any fault: the unit under way is
 * released untouched (a file back to the drop folder, a cursor where it was), the run fails with
 * that error, and the error goes on to the caller.
 */
export type PassFence = (runId: string) => Promise<void>;

export interface SourceSummary {
  sourceId: string;
  runId: string | null;
  counts: Record<Stream, KindCounts>;
  plan: PlannedOperation[];
  /**
   * The records that failed in this pass, with where they came from and why: the first
   * `LISTED_FAILURES` (the counts have them all; `receivables-sync failures` lists them all).
   */
  failures: Array<DownstreamFailure & { unit: string }>;
  /** Units (files) that could not be read at all. */
  abandoned: RefusedUnit[];
  /** What units said about themselves as a whole (a file's unknown columns). */
  warnings: Array<{ unit: string; warning: string }>;
  /** Units skipped because their content was synced before (a file dropped again as it was). */
  skipped: Array<{ unit: string; duplicateOf: { name: string; syncedAt: Date } }>;
  /** What snapshot units (a CSV file in snapshot mode) did with the records they lacked. */
  snapshots?: SnapshotOutcome[];
  /** What the source left for a later pass, not complete yet (a drop file still being written). */
  waiting?: { files: string[]; stableSeconds: number };
  /** What the source saw and takes for nothing (drop files whose names match no kind). */
  ignored?: string[];
  /** Rows that were no records and no failures (report totals, rows of another kind). */
  skippedRows?: number;
  /** A dry run's look at each unit's first rows, as the configuration reads them. */
  previews?: UnitPreview[];
  /** Who cancelled the pass (its run is `cancelled`; it stopped before a batch, the unit under way released). */
  cancelled?: string;
}

/**
 * How a pass ended: with its summary, or stopped by a fault (the API, the credentials, the state DB,
 * the pass's fence) with the summary of what it had done until then (its counts as its run
 * recorded them) and the fault, as it was thrown. A cancelled pass ended: its summary says who
 * cancelled it.
 */
export type PassOutcome =
  | { stopped: false; summary: SourceSummary }
  | { stopped: true; summary: SourceSummary; error: unknown };

/**
 * One pass of one source: read -> diff against state -> plan -> execute -> checkpoint.
 * Every record ends synced, unchanged or recorded as a failure; a unit is completed (archived,
 * cursor advanced) only after all its records are accounted for. A fault that stops the pass is
 * thrown (what the pass had done until then is lost to the caller: see `runPass` to keep it).
 */
export async function runSync(props: RunSyncProps): Promise<SourceSummary> {
  const outcome = await runPass(props);
  if (outcome.stopped) throw outcome.error;
  return outcome.summary;
}

/**
 * One pass of one source, as `runSync`, returning how it ended: a fault that stops the pass comes
 * back with what the pass had done until then (its run marked `failed` with the fault's message).
 * A fault of its run's own row (when it starts, or when a pass that ended is recorded) is thrown,
 * as from `runSync`.
 */
export async function runPass(props: RunSyncProps): Promise<PassOutcome> {
  const { source, state } = props;
  const dryRun = props.dryRun ?? false;
  const runId = dryRun ? null : await state.runs.start(source.id, props.trigger ?? 'once', false);
  const ctx: PassScope = {
    sourceId: source.id,
    connectionId: props.connectionId,
    runId,
    dryRun,
    concurrency: props.concurrency ?? 8,
    clock: props.clock ?? systemClock,
    logger: props.logger.child({ sourceId: source.id, ...(runId ? { runId } : {}) }),
    api: props.api,
    state,
    report: new PassReport(props.onProgress),
    touched: new TouchedRecords(state.runRecords, source.id, runId),
    failureKinds: await state.failures.openKinds(source.id),
    snapshots: new FingerprintSnapshots(state.recordMap, source.id, props.logger, props.snapshotPolicy),
    linkedAccounts: new LinkedAccounts(() => props.api.listLinkedAccounts(), props.connectionId),
    // A dry run plans without writing: only a lookup tells "create" from "adopt" there.
    lookups: new LookupSwitch({ lookUpFirst: dryRun, logger: props.logger.child({ sourceId: source.id }) }),
  };
  const { report } = ctx;
  const passFence = props.fence;
  // Before each batch: the caller's fence, then whether a user cancelled the run (one indexed read).
  const fence = runId
    ? async () => {
        await passFence?.(runId);
        const by = await state.runs.cancelRequest(runId);
        if (by !== null) throw new PassCancelledError(runId, by);
      }
    : undefined;
  const passLog = new PassLog(ctx.logger, () => ctx.clock.now().getTime());
  const tags = new TagResolver(ctx);
  const collected: Collected = {
    abandoned: [],
    warnings: [],
    skipped: [],
    snapshots: [],
    skippedRows: 0,
    previews: [],
  };
  const { abandoned, warnings, skipped, snapshots, previews } = collected;
  /** The run's counts, with the snapshot outcomes when there are any. */
  const runCounts = () => (snapshots.length > 0 ? { ...report.counts, snapshots } : report.counts);
  /** What the pass did so far: its summary at its end, or when a fault stopped it. */
  const summary = (): SourceSummary => {
    const left = source.waiting?.();
    const waiting = left && left.files.length > 0 ? { ...left, files: [...left.files] } : undefined;
    // Files the source set aside itself count as the units it could not read.
    const notices = source.notices?.();
    return {
      sourceId: source.id,
      runId,
      counts: report.counts,
      plan: report.plan,
      failures: report.listed,
      abandoned: notices ? [...abandoned, ...notices.refused] : abandoned,
      warnings: notices ? [...warnings, ...notices.warnings] : warnings,
      skipped,
      ...(waiting ? { waiting } : {}),
      snapshots,
      ignored: [...(notices?.ignored ?? [])],
      skippedRows: collected.skippedRows,
      ...(dryRun ? { previews } : {}),
    };
  };
  try {
    await withPassLog(passLog, () => drainSource(ctx, tags, source, fence, collected));
  } catch (error) {
    if (runId && error instanceof PassCancelledError) {
      await state.runs.finish(runId, 'cancelled', runCounts(), messageOf(error));
      const cancelled = { ...summary(), cancelled: error.by };
      tellPassEnd(ctx.logger, cancelled, 'cancelled', passLog);
      return { stopped: false, summary: cancelled };
    }
    ctx.logger.error({ code: errorCodeOf(error), reason: messageOf(error) }, 'pass failed');
    // The run says why; when the state DB is what failed, the run's row may not be writable either.
    if (runId)
      await state.runs
        .finish(runId, 'failed', runCounts(), messageOf(error))
        .catch((finishing: unknown) =>
          ctx.logger.error({ reason: messageOf(finishing) }, 'run could not be marked failed'),
        );
    return { stopped: true, summary: summary(), error };
  }
  const done = summary();
  const failed = report.anyFailed || done.abandoned.length > 0;
  const status = failed ? 'partial' : 'succeeded';
  if (runId) {
    await state.runs.finish(runId, status, runCounts());
    tellPassEnd(ctx.logger, done, status, passLog);
  }
  if (!dryRun && (await state.recordMap.maintainIfGrown()))
    ctx.logger.debug('record map vacuumed and analyzed after many writes');
  return { stopped: false, summary: done };
}

/** What a pass collects unit by unit, beyond its report's counts. */
interface Collected {
  abandoned: SourceSummary['abandoned'];
  warnings: SourceSummary['warnings'];
  skipped: SourceSummary['skipped'];
  snapshots: SnapshotOutcome[];
  skippedRows: number;
  previews: UnitPreview[];
}

/** Every unit of the source, each drained then completed (or abandoned, or released in a dry run). */
async function drainSource(
  ctx: PassScope,
  tags: TagResolver,
  source: Source,
  fence: (() => Promise<void>) | undefined,
  collected: Collected,
): Promise<void> {
  const { report, dryRun } = ctx;
  const { abandoned, warnings, skipped, snapshots, previews } = collected;
  for await (const unit of source.units()) {
    report.startUnit({
      name: unit.name,
      ...(unit.expectedRecords !== undefined ? { expectedRecords: unit.expectedRecords } : {}),
      ...(unit.duplicateOf ? { duplicateOf: unit.duplicateOf } : {}),
    });
    if (unit.duplicateOf) skipped.push({ unit: unit.name, duplicateOf: unit.duplicateOf });
    for (const warning of unit.warnings ?? []) warnings.push({ unit: unit.name, warning });
    if (unit.alreadySynced) report.alreadySynced(unit.stream, unit.alreadySynced);
    const preview = dryRun ? new PreviewCollector() : undefined;
    const read = await drainUnit(ctx, tags, unit, preview, fence);
    if (preview && preview.rows.length > 0) previews.push({ unit: unit.name, rows: preview.rows });
    collected.skippedRows += unit.skippedRows ?? 0;
    if (read !== true) {
      abandoned.push({ unit: unit.name, reason: read });
      if (!dryRun) await unit.abandon(read);
      continue;
    }
    // A snapshot unit read to its end: the records it lacks are deleted, before it is completed.
    const snapshot = unit.snapshot ? await applyUnitSnapshot(ctx, tags, unit, unit.snapshot) : null;
    if (snapshot) {
      snapshots.push(snapshot);
      warnings.push({ unit: unit.name, warning: snapshot.message });
    }
    if (dryRun) await unit.release();
    else
      await unit.complete({
        failures: report.takeUnitFailures(),
        ...(snapshot ? { notes: [snapshot.message] } : {}),
      });
    ctx.logger.info(
      { unit: unit.name, failed: report.unitFailedAll, failedAfterChecks: report.unitFailed },
      'unit done',
    );
  }
}

/**
 * Processes every batch of a unit; returns true, or the reason the unit cannot be read (its data:
 * a file that is not CSV, a module's batch of the wrong shape). Any other fault stops the pass: the
 * unit is released untouched (a file goes back to the drop folder, a cursor stays) and the fault is
 * thrown, so the next pass takes the unit again and its rows already synced cost nothing.
 */
async function drainUnit(
  ctx: PassScope,
  tags: TagResolver,
  unit: SourceUnit,
  preview?: PreviewCollector,
  fence?: () => Promise<void>,
): Promise<true | string> {
  try {
    for await (const batch of readAhead(unit.batches())) {
      await fence?.();
      preview?.take(batch);
      await processBatch(ctx, tags, batch);
      // Handed over batch by batch when the unit takes them: the pass keeps none in memory.
      if (unit.failed) await unit.failed(ctx.report.takeUnitFailures());
    }
    // Before the unit is completed (archived, its cursor advanced, a snapshot's deletions).
    await fence?.();
    return true;
  } catch (error) {
    const reason = messageOf(error);
    if (errorKindOf(error) !== 'data') {
      if (error instanceof PassCancelledError)
        ctx.logger.info({ unit: unit.name, by: error.by }, 'pass cancelled: unit released');
      else
        ctx.logger.error(
          { unit: unit.name, code: errorCodeOf(error), reason },
          'pass stopped: unit released',
        );
      await unit
        .release()
        .catch((released: unknown) =>
          ctx.logger.error({ unit: unit.name, reason: messageOf(released) }, 'unit could not be released'),
        );
      throw error;
    }
    ctx.logger.error({ unit: unit.name, code: errorCodeOf(error), reason }, 'unit could not be read');
    return reason;
  }
}
