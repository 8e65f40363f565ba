import PQueue from 'p-queue';
import type { Logger } from 'pino';
import type { RecordKind, RecordOrigin } from '../domain/records.js';
import type { DownstreamFailure } from '../sources/source.js';
import type { FailuresRepository } from '../state/failures.js';
import type { PendingWritesRepository } from '../state/pending-writes.js';
import type { RecordMapRepository } from '../state/record-map.js';
import type { SyncApi } from './api-port.js';
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

/**
 * Runs one batch of one kind: records whose hash is unchanged are counted without any work (the
 * zero-cost path of a re-run), the others go through `sync` with at most `ctx.concurrency` at once;
 * a failure is recorded, and the open failures of the records that went through are resolved in
 * one query at the end.
 */
export async function processBatchOf<T extends { record: { sourceId: string }; origin: RecordOrigin }>(
  ctx: SyncContext,
  kind: RecordKind,
  items: readonly T[],
  unchanged: (item: T) => boolean,
  sync: (item: T) => Promise<Outcome>,
  stage: string,
): Promise<void> {
  const succeeded: string[] = [];
  const work: T[] = [];
  for (const item of items) {
    if (unchanged(item)) {
      count(ctx, kind, 'unchanged');
      succeeded.push(item.record.sourceId);
    } else work.push(item);
  }
  const queue = new PQueue({ concurrency: ctx.concurrency });
  await queue.addAll(
    work.map((item) => async () => {
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
  // Only records with an open failure need the UPDATE: an ordinary re-run costs no write here.
  const toResolve = succeeded.filter((key) => ctx.openFailures.delete(`${kind}:${key}`));
  if (!ctx.dryRun) await ctx.failures.resolve(ctx.sourceId, kind, toResolve);
}
