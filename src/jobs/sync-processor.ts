import { randomUUID } from 'node:crypto';
import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { type Clock, systemClock } from '../domain/clock.js';
import type { SourceSummary } from '../sync/run-sync.js';
import type { SyncUseCases } from '../sync/sync-service.js';
import { permanentJobError, toJobError } from './job-errors.js';
import type { SyncJobName } from './job-keys.js';
import { type PassRecords, passFenceOf } from './pass-fence.js';
import type { SourceLease, SourceLock } from './source-lock.js';
import type { ReconcileTrigger, SyncJob, SyncJobResult } from './types.js';

/** The use cases a job runs: the same `SyncService` the CLI uses. */
export type { SyncUseCases };

/**
 * A reconciliation of one source (`reconcileWith` over the worker's runtime, wired in `app/`):
 * stores its result and answers what the job reports.
 */
export type ReconcileUseCase = (
  sourceId: string,
  options: { trigger: ReconcileTrigger; repair: boolean },
) => Promise<{ id: string; repaired: boolean; drift: number; items: readonly unknown[]; requests: number }>;

export interface SyncProcessorProps {
  service: SyncUseCases;
  sources: readonly SourceConfig[];
  lock: Pick<SourceLock, 'acquire' | 'holder'>;
  /**
   * The source's passes in the state DB: no job starts while one is live (its source lock may be
   * gone with a Redis restart while it runs), and a pass stops before its next batch once a later
   * one started (see `pass-fence.ts`).
   */
  passes: PassRecords;
  logger: Logger;
  /** A paused source's jobs finish at once without syncing (the dashboard pauses and resumes). */
  isPaused(sourceId: string): Promise<boolean>;
  /** How long a job waits when another job of its source holds the source lock. */
  sourceBusyRetryMs: number;
  /** Runs `source-reconcile` jobs; without it they fail for good (this process cannot run them). */
  reconcile?: ReconcileUseCase;
  clock?: Clock;
}

/** The part of a BullMQ job the processor uses (tests pass plain objects). */
export type ProcessedJob = Pick<
  Job<SyncJob, SyncJobResult, SyncJobName>,
  'id' | 'name' | 'data' | 'attemptsMade' | 'stalledCounter' | 'moveToDelayed'
>;

/**
 * The worker's processor: one job = one use case of `SyncService`, under the source lock.
 * A job whose source is busy (a pass of it live in the state DB, or its lock held) goes back to
 * `delayed` without spending an attempt (`DelayedError`); a permanent failure is thrown as
 * `UnrecoverableError`, anything else is retried with backoff. A pass goes on only while its
 * lock is its job's and no later pass of its source started (`passFenceOf`).
 */
export function createSyncProcessor(props: SyncProcessorProps) {
  const clock = props.clock ?? systemClock;
  return async (job: ProcessedJob, token?: string): Promise<SyncJobResult> => {
    const data = job.data;
    const log = props.logger.child({
      jobId: job.id,
      job: job.name,
      sourceId: data.sourceId,
      ...(data.connection ? { connection: data.connection } : {}),
    });
    const config = props.sources.find((s) => s.id === data.sourceId);
    if (!config) throw permanentJobError(`no source "${data.sourceId}" in the configuration`);
    if (await props.isPaused(data.sourceId)) {
      log.info({ event: 'job.skipped', reason: 'paused' }, 'source paused: job skipped');
      return { sourceId: data.sourceId, runs: [], skipped: 'paused' };
    }
    const waitForSource = async (): Promise<never> => {
      await job.moveToDelayed(clock.now().getTime() + props.sourceBusyRetryMs, token);
      throw new DelayedError();
    };
    // Asked before the lock: a pass that still runs after Redis lost its lock holds none.
    const live = await props.passes.live(data.sourceId);
    if (live.length > 0) {
      if ((await props.lock.holder(data.sourceId)) === null)
        log.warn(
          { event: 'job.waiting', runs: live, retryInMs: props.sourceBusyRetryMs },
          'a pass of this source still runs though its source lock is gone (Redis restarted?): waiting for it',
        );
      else
        log.debug(
          { runs: live, retryInMs: props.sourceBusyRetryMs },
          'a pass of this source is running: waiting',
        );
      return waitForSource();
    }
    const owner = `${job.id}:${token ?? randomUUID()}`;
    const lease = await props.lock.acquire(data.sourceId, owner, { pass: data.type === 'source-sync' });
    if (!lease) {
      log.debug({ retryInMs: props.sourceBusyRetryMs }, 'another job of this source is running: waiting');
      return waitForSource();
    }
    let finished = false;
    try {
      log.info(
        { event: 'job.started', attempt: job.attemptsMade + 1, recovered: job.stalledCounter > 0 },
        'job started',
      );
      const result = await run(props, data, config, lease, log);
      finished = true;
      log.info({ event: 'job.done', runs: result.runs }, 'job done');
      return result;
    } catch (error) {
      throw toJobError(error);
    } finally {
      await lease.release({ passFinished: finished }).catch((error: Error) => {
        log.warn({ err: error.message }, 'cannot release the source lock (it expires by itself)');
      });
    }
  };
}

async function run(
  props: SyncProcessorProps,
  data: SyncJob,
  _config: SourceConfig,
  lease: SourceLease,
  log: Logger,
): Promise<SyncJobResult> {
  switch (data.type) {
    case 'source-sync': {
      if (lease.previousPassUnfinished) {
        const restored = await props.service.recoverInterrupted(data.sourceId);
        if (restored.length > 0) log.warn({ restored }, 'units left by a cut-short pass put back');
      }
      const summaries = await props.service.syncSource(data.sourceId, {
        trigger: data.trigger,
        ...(data.full ? { full: true } : {}),
        fence: passFenceOf({ sourceId: data.sourceId, lease, records: props.passes }),
      });
      return resultOf(data.sourceId, summaries);
    }
    case 'failure-retry': {
      const { summary, needData, rejectedFiles } = await props.service.retryFailures(
        data.sourceId,
        data.failureIds ? { ids: data.failureIds } : undefined,
      );
      return {
        ...resultOf(data.sourceId, summary ? [summary] : []),
        needData,
        ...(rejectedFiles.length > 0 ? { rejectedFiles: rejectedFiles.length } : {}),
      };
    }
    case 'source-reconcile': {
      if (!props.reconcile) throw permanentJobError('this worker cannot run reconciliations');
      const outcome = await props.reconcile(data.sourceId, {
        trigger: data.trigger,
        repair: data.repair ?? false,
      });
      log.info(
        { event: 'reconcile.job.done', reconciliationId: outcome.id, drift: outcome.drift },
        'reconciliation done',
      );
      return {
        sourceId: data.sourceId,
        runs: [],
        reconcile: {
          reconciliationId: outcome.id,
          repaired: outcome.repaired,
          drift: outcome.drift,
          found: outcome.items.length,
          requests: outcome.requests,
        },
      };
    }
    case 'record-resync': {
      if (!(await props.service.hasRecord(data.sourceId, data.kind, data.sourceKey))) {
        throw permanentJobError(`${data.sourceId} has no synced ${data.kind} "${data.sourceKey}"`);
      }
      return resultOf(data.sourceId, [
        await props.service.resyncRecord(data.sourceId, data.kind, data.sourceKey),
      ]);
    }
  }
}

/** A small, JSON-friendly result (BullMQ stores it; bull-board shows it). */
function resultOf(sourceId: string, summaries: readonly SourceSummary[]): SyncJobResult {
  return {
    sourceId,
    runs: summaries.map((s) => ({
      runId: s.runId,
      counts: s.counts,
      failed: Object.values(s.counts).reduce((n, c) => n + c.failed, 0),
      abandoned: s.abandoned.length,
      ...(s.cancelled ? { cancelledBy: s.cancelled } : {}),
    })),
  };
}
