import { AppError } from '../domain/errors.js';
import type { PassFence } from '../sync/run-sync.js';
import type { SourceLease } from './source-lock.js';

/**
 * What the state DB says of a source's passes (`SourcePasses` of `state/source-passes.ts`): it
 * survives a Redis restart, which the source lock does not.
 */
export interface PassRecords {
  /** The source's runs in progress whose process is alive. */
  live(sourceId: string): Promise<string[]>;
  /** The first run of the source started after `runId`, or null. */
  startedAfter(sourceId: string, runId: string): Promise<string | null>;
}

/** A pass stopped because its source lock is another job's now. Retryable: the job runs again later. */
export class SourceLockLostError extends AppError {
  constructor(sourceId: string, holder: string) {
    super(
      'SOURCE_LOCK_LOST',
      `the lock of source "${sourceId}" was lost to another job (${holder}), Redis having lost it: this pass stopped before its next batch, its file put back`,
    );
  }
}

/** A pass stopped because a later pass of its source started. Retryable: the job runs again later. */
export class PassSupersededError extends AppError {
  constructor(sourceId: string, runId: string, laterRunId: string) {
    super(
      'SOURCE_PASS_SUPERSEDED',
      `another pass of source "${sourceId}" started (run ${laterRunId}) while this one (run ${runId}) ran: this pass stopped before its next batch, its file put back`,
    );
  }
}

/**
 * The fence of one job's passes, asked by the sync engine before each batch and before a unit is
 * completed: the pass goes on only while its source lock is still its job's and no later run of its
 * source exists (a run id is the fencing token: a sequence of the state DB, taken by each pass as it
 * starts). One indexed read per batch.
 */
export function passFenceOf(props: {
  sourceId: string;
  lease: Pick<SourceLease, 'lostTo'>;
  records: Pick<PassRecords, 'startedAfter'>;
}): PassFence {
  const { sourceId, lease, records } = props;
  return async (runId) => {
    const holder = lease.lostTo;
    if (holder !== null) throw new SourceLockLostError(sourceId, holder);
    const later = await records.startedAfter(sourceId, runId);
    if (later !== null) throw new PassSupersededError(sourceId, runId, later);
  };
}
