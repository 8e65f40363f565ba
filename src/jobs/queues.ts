import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { deduplicationIdOf, jobIdOf, SYNC_QUEUE, type SyncJobName } from './job-keys.js';
import type { ReconcileTrigger, SyncJob, SyncJobResult, SyncQueues } from './types.js';
import type { WorkerSettings } from './worker-settings.js';

export type SyncQueue = Queue<SyncJob, SyncJobResult, SyncJobName>;

export interface BullSyncQueuesProps {
  /** A connection made with `openQueueConnection` (shared: closing the queues leaves it open). */
  connection: Redis;
  settings: Pick<WorkerSettings, 'prefix' | 'attempts' | 'backoffMs' | 'keepCompleted' | 'keepFailed'>;
  logger: Logger;
  /** The connection a source syncs through, written into each of its jobs (docs/connections.md). */
  connectionOf?: ((sourceId: string) => string) | undefined;
}

/**
 * The producer side of the worker: adds jobs to the `sync` queue. Every job is deduplicated
 * (`deduplicationIdOf`), retried with exponential backoff and kept within bounds once finished.
 *
 * @example
 *   const queues = new BullSyncQueues({ connection, settings, logger });
 *   await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' }); // { jobId, deduplicated: false }
 *   await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' }); // the same jobId, deduplicated: true
 */
export class BullSyncQueues implements SyncQueues {
  readonly queue: SyncQueue;
  /** Every queue of the worker, for bull-board and the metrics: the sync queue first, then `show`n ones. */
  readonly queues: Queue[];
  readonly #logger: Logger;
  readonly #connectionOf: ((sourceId: string) => string) | undefined;

  constructor(props: BullSyncQueuesProps) {
    const { settings } = props;
    this.#logger = props.logger;
    this.#connectionOf = props.connectionOf;
    this.queue = new Queue<SyncJob, SyncJobResult, SyncJobName>(SYNC_QUEUE, {
      connection: props.connection,
      prefix: settings.prefix,
      defaultJobOptions: {
        attempts: settings.attempts,
        backoff: { type: 'exponential', delay: settings.backoffMs },
        removeOnComplete: { count: settings.keepCompleted },
        removeOnFail: { count: settings.keepFailed },
      },
    });
    // Connection errors are the connection's to report (see watchConnection); without a listener
    // an 'error' event would end the process.
    this.queue.on('error', (error) => this.#logger.debug({ err: error.message }, 'queue error'));
    this.queues = [this.queue as unknown as Queue];
  }

  /** Shows another queue of the worker (the alerts') next to the sync queue: bull-board, metrics, status. */
  show(queue: Queue): void {
    if (!this.queues.includes(queue)) this.queues.push(queue);
  }

  enqueueSourceSync(
    sourceId: string,
    options: { trigger?: 'schedule' | 'manual' | 'file'; full?: boolean; scheduledAt?: Date } = {},
  ): Promise<{ jobId: string; deduplicated: boolean }> {
    const job: SyncJob = {
      type: 'source-sync',
      sourceId,
      trigger: options.trigger ?? 'manual',
      ...(options.full ? { full: true } : {}),
    };
    return this.#add(job, options.scheduledAt);
  }

  enqueueRecordResync(
    sourceId: string,
    kind: 'account' | 'invoice' | 'creditNote',
    sourceKey: string,
  ): Promise<{ jobId: string; deduplicated: boolean }> {
    return this.#add({ type: 'record-resync', sourceId, kind, sourceKey });
  }

  enqueueFailureRetry(
    sourceId: string,
    options: { failureIds?: readonly string[] } = {},
  ): Promise<{ jobId: string; deduplicated: boolean }> {
    const { failureIds } = options;
    return this.#add({
      type: 'failure-retry',
      sourceId,
      ...(failureIds ? { failureIds: [...failureIds] } : {}),
    });
  }

  enqueueSourceReconcile(
    sourceId: string,
    options: { trigger: ReconcileTrigger; repair?: boolean; scheduledAt?: Date },
  ): Promise<{ jobId: string; deduplicated: boolean }> {
    return this.#add(
      {
        type: 'source-reconcile',
        sourceId,
        trigger: options.trigger,
        ...(options.repair ? { repair: true } : {}),
      },
      options.scheduledAt,
    );
  }

  async close(): Promise<void> {
    await this.queue.close();
  }

  /**
   * Adds a job unless one with the same deduplication id is pending; BullMQ then answers with the
   * pending job, whose id differs from the one asked for. (A schedule tick another worker already
   * added answers with the same id: the tick is queued once either way.)
   */
  async #add(queued: SyncJob, tick?: Date): Promise<{ jobId: string; deduplicated: boolean }> {
    const job: SyncJob = this.#connectionOf
      ? { ...queued, connection: this.#connectionOf(queued.sourceId) }
      : queued;
    const jobId = jobIdOf(job, tick);
    const added = await this.queue.add(job.type, job, {
      jobId,
      deduplication: { id: deduplicationIdOf(job) },
    });
    const result = { jobId: added.id ?? jobId, deduplicated: added.id !== undefined && added.id !== jobId };
    this.#logger.debug({ ...result, job: job.type, sourceId: job.sourceId }, 'job enqueued');
    return result;
  }
}
