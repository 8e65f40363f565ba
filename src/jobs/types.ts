import type { Queue } from 'bullmq';

/**
 * Jobs of the worker. Job ids are deterministic so a source never has two syncs queued at once.
 * Each carries the connection its source synced through when it was queued (`connection`, shown on
 * the dashboard and in bull-board; the pass itself follows the configuration it runs with).
 */
export type SyncJob = (
  | { type: 'source-sync'; sourceId: string; trigger: 'schedule' | 'manual' | 'file'; full?: boolean }
  | { type: 'record-resync'; sourceId: string; kind: 'account' | 'invoice' | 'creditNote'; sourceKey: string }
  | {
      type: 'failure-retry';
      sourceId: string;
      /** Only these failures (a user's selection on the dashboard); default: every open failure. */
      failureIds?: string[];
    }
  | {
      /** A reconciliation of the source against the service (docs/reconcile.md), under the source lock. */
      type: 'source-reconcile';
      sourceId: string;
      trigger: ReconcileTrigger;
      /** Also repair what the API allows (default: report only). */
      repair?: boolean;
    }
) & { connection?: string };

/** Who asked for a reconciliation: its schedule (`reconcile.schedule`), the dashboard, a script. */
export type ReconcileTrigger = 'schedule' | 'dashboard' | 'manual';

/** What a finished job returns (shown by bull-board): one entry per run of the sync engine. */
export interface SyncJobResult {
  sourceId: string;
  runs: Array<{
    runId: string | null;
    counts: Record<
      'accounts' | 'invoices' | 'creditNotes',
      { created: number; updated: number; unchanged: number; failed: number }
    >;
    failed: number;
    abandoned: number;
    /** Who cancelled the pass (its run is `cancelled`, the job done). */
    cancelledBy?: string;
  }>;
  /** failure-retry: failures that cannot be retried from their stored payload (the row must be dropped again). */
  needData?: number;
  /** failure-retry: files that could not be read at all (fix the file or the configuration, drop it again). */
  rejectedFiles?: number;
  /** The job ran nothing: its source is paused. */
  skipped?: 'paused';
  /** source-reconcile: the stored reconciliation (`reconciliations` row) and what it found. */
  reconcile?: { reconciliationId: string; repaired: boolean; drift: number; found: number; requests: number };
}

/**
 * What the dashboard and the CLI need from the worker's queues: enqueue work, and the BullMQ
 * queues themselves for bull-board. Implemented in `src/jobs/queues.ts`.
 */
export interface SyncQueues {
  /**
   * Queues a pass of one source (deduplicated: a source already queued or running is not queued
   * twice; `deduplicated` is then true and `jobId` is the pending job's). `scheduledAt`: the tick of
   * a schedule, which makes the job id deterministic so every worker firing that tick adds one job.
   */
  enqueueSourceSync(
    sourceId: string,
    options?: { trigger?: 'schedule' | 'manual' | 'file'; full?: boolean; scheduledAt?: Date },
  ): Promise<{ jobId: string; deduplicated: boolean }>;
  /** Queues the re-sync of one record by its source id. */
  enqueueRecordResync(
    sourceId: string,
    kind: 'account' | 'invoice' | 'creditNote',
    sourceKey: string,
  ): Promise<{ jobId: string; deduplicated: boolean }>;
  /** Queues a retry of the source's open failures (or only of `failureIds`). */
  enqueueFailureRetry(
    sourceId: string,
    options?: { failureIds?: readonly string[] },
  ): Promise<{ jobId: string; deduplicated: boolean }>;
  /**
   * Queues a reconciliation of one source (deduplicated per source and mode: a reconciliation
   * already queued or running is answered with `deduplicated`). `scheduledAt`: the tick of its
   * `reconcile.schedule` (a deterministic job id, as for passes).
   */
  enqueueSourceReconcile(
    sourceId: string,
    options: { trigger: ReconcileTrigger; repair?: boolean; scheduledAt?: Date },
  ): Promise<{ jobId: string; deduplicated: boolean }>;
  /** For bull-board and metrics. */
  readonly queues: readonly Queue[];
  close(): Promise<void>;
}
