import type { Logger } from 'pino';
import type { AccountRecord, CreditNoteRecord, InvoiceRecord, RecordOrigin } from '../domain/records.js';
import type { DownstreamFailure, Source, SourceBatch, SourceUnit } from '../sources/source.js';
import type { StateDb } from '../state/database.js';
import { FailuresRepository } from '../state/failures.js';
import { PendingWritesRepository } from '../state/pending-writes.js';
import { RecordMapRepository } from '../state/record-map.js';
import { RunsRepository } from '../state/runs.js';
import { syncAccounts } from './account-sync.js';
import type { SyncApi } from './api-port.js';
import { type PlannedOperation, type ProgressEvent, recordFailure, type SyncContext } from './context.js';
import { syncDocuments } from './document-sync.js';
import { FingerprintSnapshots, type SnapshotPolicy } from './fingerprint-snapshot.js';
import { emptyCounts, type KindCounts, type SummaryKey } from './outcome.js';
import { TagResolver } from './tag-resolver.js';

export interface SyncStateRepos {
  recordMap: RecordMapRepository;
  pending: PendingWritesRepository;
  failures: FailuresRepository;
  runs: RunsRepository;
}

/** The repositories a pass writes to, over one state DB. */
export function syncStateRepos(db: StateDb): SyncStateRepos {
  return {
    recordMap: new RecordMapRepository(db),
    pending: new PendingWritesRepository(db),
    failures: new FailuresRepository(db),
    runs: new RunsRepository(db),
  };
}

export interface RunSyncProps {
  source: Source;
  /** The connectionId of linked account sources (default: the source id). */
  connectionId: string;
  api: SyncApi;
  state: SyncStateRepos;
  logger: Logger;
  trigger?: string;
  dryRun?: boolean;
  /** Records written at once within a batch (the API client bounds requests in flight too). */
  concurrency?: number;
  now?: () => Date;
  onProgress?: (event: ProgressEvent) => void;
  /** When a large pass reads the record map's fingerprints at once (default: DEFAULT_SNAPSHOT_POLICY). */
  snapshotPolicy?: SnapshotPolicy;
}

export interface SourceSummary {
  sourceId: string;
  runId: string | null;
  counts: Record<SummaryKey, KindCounts>;
  plan: PlannedOperation[];
  /** Every record that failed in this pass, with where it came from and why. */
  failures: Array<DownstreamFailure & { unit: string }>;
  /** Units (files) that could not be read at all. */
  abandoned: Array<{ unit: string; reason: string }>;
}

/**
 * One pass of one source: read -> diff against state -> plan -> execute -> checkpoint.
 * Every record ends synced, unchanged or recorded as a failure; a unit is completed (archived,
 * cursor advanced) only after all its records are accounted for.
 */
export async function runSync(props: RunSyncProps): Promise<SourceSummary> {
  const { source, state } = props;
  const dryRun = props.dryRun ?? false;
  const runId = dryRun ? null : await state.runs.start(source.id, props.trigger ?? 'once', false);
  const ctx: SyncContext = {
    sourceId: source.id,
    connectionId: props.connectionId,
    runId,
    dryRun,
    api: props.api,
    recordMap: state.recordMap,
    pending: state.pending,
    failures: state.failures,
    logger: props.logger.child({ sourceId: source.id, ...(runId ? { runId } : {}) }),
    concurrency: props.concurrency ?? 8,
    now: props.now ?? (() => new Date()),
    counts: { accounts: emptyCounts(), invoices: emptyCounts(), creditNotes: emptyCounts() },
    openFailures: await state.failures.openKeys(source.id),
    unitFailures: [],
    plan: [],
    onProgress: props.onProgress ?? (() => {}),
    snapshots: new FingerprintSnapshots(state.recordMap, source.id, props.logger, props.snapshotPolicy),
  };
  const tags = new TagResolver(ctx);
  const abandoned: SourceSummary['abandoned'] = [];
  const failures: SourceSummary['failures'] = [];
  try {
    for await (const unit of source.units()) {
      ctx.onProgress({ type: 'unit', name: unit.name });
      ctx.unitFailures = [];
      const read = await drainUnit(ctx, tags, unit);
      if (read !== true) {
        abandoned.push({ unit: unit.name, reason: read });
        if (!dryRun) await unit.abandon(read);
        continue;
      }
      failures.push(...ctx.unitFailures.map((f) => ({ ...f, unit: unit.name })));
      if (dryRun) await unit.release();
      else await unit.complete({ failures: ctx.unitFailures });
      ctx.logger.info({ unit: unit.name, failed: ctx.unitFailures.length }, 'unit done');
    }
  } catch (error) {
    if (runId) await state.runs.finish(runId, 'failed', ctx.counts, (error as Error).message);
    throw error;
  }
  const failed = Object.values(ctx.counts).some((c) => c.failed > 0) || abandoned.length > 0;
  if (runId) await state.runs.finish(runId, failed ? 'partial' : 'succeeded', ctx.counts);
  if (!dryRun && (await state.recordMap.maintainIfGrown()))
    ctx.logger.debug('record map vacuumed and analyzed after many writes');
  return { sourceId: source.id, runId, counts: ctx.counts, plan: ctx.plan, failures, abandoned };
}

/** Processes every batch of a unit; returns true, or the reason the unit could not be read. */
async function drainUnit(ctx: SyncContext, tags: TagResolver, unit: SourceUnit): Promise<true | string> {
  try {
    for await (const batch of readAhead(unit.batches())) await processBatch(ctx, tags, batch);
    return true;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    ctx.logger.error({ unit: unit.name, reason }, 'unit could not be read');
    return reason;
  }
}

/**
 * Asks for the next batch before the current one is handed out, so a source reads (parses,
 * validates, fetches a page) while the engine waits on the state DB or the API. Sources checkpoint
 * in `complete()`, never on being asked for the next batch, so reading one ahead loses nothing.
 */
export async function* readAhead<T>(batches: AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = batches[Symbol.asyncIterator]();
  let next = iterator.next();
  try {
    for (;;) {
      const result = await next;
      if (result.done) return;
      next = iterator.next();
      // Settled later, or never when the engine stops here: do not let it be an unhandled rejection.
      next.catch(() => undefined);
      yield result.value;
    }
  } finally {
    await iterator.return?.();
  }
}

async function processBatch(ctx: SyncContext, tags: TagResolver, batch: SourceBatch): Promise<void> {
  ctx.onProgress({ type: 'records', read: batch.records.length, rejected: batch.rejected.length });
  for (const problem of batch.rejected) {
    await recordFailure(
      ctx,
      problem.kind,
      problem.sourceKey,
      { ...(problem.file ? { file: problem.file } : {}), ...(problem.line ? { line: problem.line } : {}) },
      {
        stage: 'validate',
        message: problem.reason,
        status: null,
        apiCode: null,
        retryable: false,
        ...(problem.column ? { column: problem.column } : {}),
      },
      problem.raw ? { raw: problem.raw } : null,
    );
  }
  const accounts: Array<{ record: AccountRecord; origin: RecordOrigin }> = [];
  const invoices: Array<{ record: InvoiceRecord; origin: RecordOrigin }> = [];
  const creditNotes: Array<{ record: CreditNoteRecord; origin: RecordOrigin }> = [];
  for (const { record, origin } of batch.records) {
    if (record.kind === 'account') accounts.push({ record, origin });
    else if (record.kind === 'invoice') invoices.push({ record, origin });
    else creditNotes.push({ record, origin });
  }
  for (const round of roundsOf(accounts)) await syncAccounts(ctx, tags, round);
  for (const round of roundsOf(invoices)) await syncDocuments(ctx, 'invoice', round);
  for (const round of roundsOf(creditNotes)) await syncDocuments(ctx, 'creditNote', round);
}

/**
 * Splits a kind's records into rounds of distinct keys, in order: a key a batch holds twice is
 * synced twice, one after the other, never at the same time (the CSV source refuses such rows; a
 * module source may send them).
 */
export function roundsOf<T extends { record: { sourceId: string } }>(items: readonly T[]): T[][] {
  const rounds: Array<{ items: T[]; keys: Set<string> }> = [];
  for (const item of items) {
    const key = item.record.sourceId;
    let round = rounds.find((r) => !r.keys.has(key));
    if (!round) {
      round = { items: [], keys: new Set() };
      rounds.push(round);
    }
    round.items.push(item);
    round.keys.add(key);
  }
  return rounds.map((r) => r.items);
}
