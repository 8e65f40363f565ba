import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { RecordKind, RecordOrigin } from '../domain/records.js';
import type { DownstreamFailure } from '../sources/source.js';
import type { FailuresRepository } from '../state/failures.js';
import type { PendingWritesRepository } from '../state/pending-writes.js';
import type { MappedRecord, RecordMapRepository } from '../state/record-map.js';
import type { SyncApi } from './api-port.js';
import type { FingerprintSnapshots } from './fingerprint-snapshot.js';
import {
  type FailureReason,
  type KindCounts,
  type Outcome,
  reasonOf,
  SUMMARY_KEY,
  type SummaryKey,
} from './outcome.js';

/** A planned operation, as `--dry-run` prints it. */
export interface PlannedOperation {
  kind: RecordKind;
  sourceKey: string;
  operation: string;
  detail?: string;
}

/** Everything one pass of one source needs; built once per pass by `runSync`. */
export interface SyncContext {
  sourceId: string;
  connectionId: string;
  runId: string | null;
  dryRun: boolean;
  api: SyncApi;
  recordMap: RecordMapRepository;
  pending: PendingWritesRepository;
  failures: FailuresRepository;
  logger: Logger;
  concurrency: number;
  now: () => Date;
  counts: Record<SummaryKey, KindCounts>;
  /** `kind:sourceKey` of the open failures of the source, so only those are resolved. */
  openFailures: Set<string>;
  /** Failures of the unit being processed, handed to the source for its report. */
  unitFailures: DownstreamFailure[];
  plan: PlannedOperation[];
  onProgress: (event: ProgressEvent) => void;
  /** The record map's fingerprints, read once when a pass is large (see FingerprintSnapshots). */
  snapshots: FingerprintSnapshots;
}

export type ProgressEvent =
  | { type: 'unit'; name: string }
  | { type: 'records'; read: number; rejected: number }
  | { type: 'outcome'; kind: RecordKind; outcome: Outcome };

export function count(ctx: SyncContext, kind: RecordKind, outcome: Outcome): void {
  ctx.counts[SUMMARY_KEY[kind]][outcome]++;
  ctx.onProgress({ type: 'outcome', kind, outcome });
}

/** Records a failed record: in the state DB (retryable or not) and in the unit's report. */
export async function recordFailure(
  ctx: SyncContext,
  kind: RecordKind,
  sourceKey: string,
  origin: RecordOrigin,
  reason: FailureReason,
  payload: Record<string, unknown> | null,
): Promise<void> {
  count(ctx, kind, 'failed');
  ctx.unitFailures.push({
    origin,
    sourceKey,
    reason: reason.apiCode ? `${reason.message} [${reason.apiCode}]` : reason.message,
    ...(reason.column ? { column: reason.column } : {}),
  });
  ctx.logger.warn(
    { kind, sourceKey, stage: reason.stage, status: reason.status, apiCode: reason.apiCode },
    'record failed',
  );
  if (ctx.dryRun) return;
  ctx.openFailures.add(`${kind}:${sourceKey}`);
  await ctx.failures.record({
    sourceId: ctx.sourceId,
    kind,
    sourceKey,
    stage: reason.stage,
    message: reason.message,
    status: reason.status,
    apiCode: reason.apiCode,
    file: origin.file ?? null,
    line: origin.line ?? null,
    column: reason.column ?? null,
    retryable: reason.retryable,
    payload,
    runId: ctx.runId,
  });
}

/** Runs a write under an Idempotency-Key stored first; the key is dropped once the answer is final. */
export async function withPendingWrite<T>(
  ctx: SyncContext,
  ref: { kind: RecordKind; sourceKey: string; operation: string },
  bodyHash: string,
  send: (idempotencyKey: string) => Promise<T>,
): Promise<T> {
  const key = await ctx.pending.begin({ sourceId: ctx.sourceId, ...ref }, bodyHash);
  try {
    const result = await send(key);
    await ctx.pending.finish(key);
    return result;
  } catch (error) {
    // A transient fault keeps the key, so the next attempt (this run or the next) reuses it.
    const retryable = (error as { retryable?: boolean }).retryable === true;
    if (!retryable) await ctx.pending.finish(key);
    throw error;
  }
}

/** Splits a list into chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

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
  ctx: SyncContext,
  kind: RecordKind,
  items: readonly T[],
  fingerprintOf: (record: R) => string,
): Promise<BatchPlan<T>> {
  await ctx.snapshots.observe(kind, items.length);
  const plan: BatchPlan<T> = { work: [], known: new Map(), unknown: [], unchanged: [] };
  // Fingerprints the snapshot cannot vouch for are compared with the state DB.
  const fingerprints = new Map<string, string>();
  for (const item of items) {
    const key = item.record.sourceId;
    const fingerprint = fingerprintOf(item.record);
    if (ctx.snapshots.unchanged(kind, key, fingerprint)) plan.unchanged.push(key);
    else fingerprints.set(key, fingerprint);
  }
  const diff = await ctx.recordMap.diff(ctx.sourceId, kind, fingerprints);
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
  if (!ctx.dryRun) await ctx.recordMap.setFingerprints(ctx.sourceId, kind, refreshed);
  ctx.snapshots.forget(kind, refreshed.keys());
  for (const _ of plan.unchanged) count(ctx, kind, 'unchanged');
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

/**
 * Runs the work of a batch plan through `sync`, at most `ctx.concurrency` records at once; a failure
 * is recorded, and the open failures of the records that went through (or were unchanged) are
 * resolved in one query at the end.
 */
export async function processBatchOf<T extends BatchItem<{ sourceId: string }>>(
  ctx: SyncContext,
  kind: RecordKind,
  plan: BatchPlan<T>,
  sync: (item: T) => Promise<Outcome>,
  stage: string,
): Promise<void> {
  const succeeded = [...plan.unchanged];
  if (plan.work.length > 0) {
    const queue = new PQueue({ concurrency: ctx.concurrency });
    await queue.addAll(
      plan.work.map((item) => async () => {
        try {
          count(ctx, kind, await sync(item));
          succeeded.push(item.record.sourceId);
        } catch (error) {
          await recordFailure(ctx, kind, item.record.sourceId, item.origin, reasonOf(error, stage), {
            record: item.record,
          });
        }
      }),
    );
  }
  // Written (or maybe written, when they failed): from now on compared with the state DB only.
  ctx.snapshots.forget(
    kind,
    plan.work.map((item) => item.record.sourceId),
  );
  // Only records with an open failure need the UPDATE: an ordinary re-run costs no write here.
  const toResolve = succeeded.filter((key) => ctx.openFailures.delete(`${kind}:${key}`));
  if (!ctx.dryRun) await ctx.failures.resolve(ctx.sourceId, kind, toResolve);
}
