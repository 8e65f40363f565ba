import { createHash, randomBytes } from 'node:crypto';
import type { SyncJob } from './types.js';

/** The one BullMQ queue of the worker; jobs are told apart by name (`SyncJob['type']`). */
export const SYNC_QUEUE = 'sync';

export type SyncJobName = SyncJob['type'];

/**
 * The deduplication id of a job: while a job with this id is queued, delayed (between retries) or
 * running, adding another one with the same id adds nothing. One pass per source at a time.
 */
export function deduplicationIdOf(job: SyncJob): string {
  switch (job.type) {
    case 'source-sync':
      return `source-sync:${job.sourceId}`;
    case 'failure-retry':
      // A retry of a selection is its own work: a retry of all failures pending does not swallow it.
      return job.failureIds
        ? `failure-retry:${job.sourceId}:${createHash('sha256')
            .update([...job.failureIds].sort().join(','))
            .digest('hex')
            .slice(0, 16)}`
        : `failure-retry:${job.sourceId}`;
    case 'record-resync':
      return `record-resync:${job.sourceId}:${job.kind}:${job.sourceKey}`;
    case 'source-reconcile':
      // A repair asked while a report is pending is its own work (it writes); two reports are one.
      return `source-reconcile:${job.sourceId}${job.repair ? ':repair' : ''}`;
  }
}

/**
 * The id of a job. A schedule tick has a deterministic id (the source and the tick's second), so
 * every worker process firing the same tick adds the same job once. Other jobs get a unique id.
 * BullMQ refuses ':' in custom ids, and source ids never hold one.
 *
 * @example jobIdOf({ type: 'source-sync', sourceId: 'erp-csv', trigger: 'schedule' }, new Date('2026-01-01T00:05:00Z'))
 *   // 'source-sync.erp-csv.t1767225900'
 */
export function jobIdOf(job: SyncJob, tick?: Date): string {
  if ((job.type === 'source-sync' || job.type === 'source-reconcile') && job.trigger === 'schedule' && tick) {
    return `${job.type}.${job.sourceId}.t${Math.floor(tick.getTime() / 1000)}`;
  }
  return `${job.type}.${job.sourceId}.${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
}
