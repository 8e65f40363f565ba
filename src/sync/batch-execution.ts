import PQueue from 'p-queue';
import { errorKindOf } from '../domain/errors.js';
import type { RecordKind } from '../domain/records.js';
import type { BatchItem, BatchPlan } from './batch-diff.js';
import { recordFailure } from './failure-recorder.js';
import { type Outcome, reasonOf } from './outcome.js';
import type { PassScope } from './pass-scope.js';

/** The stage of the failures a reconciliation records (`src/reconcile`): see `processBatchOf`. */
export const RECONCILE_STAGE = 'reconcile';

/**
 * Runs the work of a batch plan through `sync`, at most `scope.concurrency` records at once. A
 * record refused for its data (kind `data`) is recorded as a failure and the batch goes on; any
 * other fault (the API, the network, credentials, the state DB) is no fault of the record: no new
 * record is started, the ones under way settle, and the fault is thrown to stop the pass. The open
 * failures of the records that went through (or were unchanged) are resolved in one query.
 */
export async function processBatchOf<T extends BatchItem<{ sourceId: string }>>(
  scope: PassScope,
  kind: RecordKind,
  plan: BatchPlan<T>,
  sync: (item: T) => Promise<Outcome>,
  stage: string,
): Promise<void> {
  const succeeded: string[] = [];
  let stopped: { error: unknown } | null = null;
  if (plan.work.length > 0) {
    const queue = new PQueue({ concurrency: scope.concurrency });
    await queue.addAll(
      plan.work.map((item) => async () => {
        if (stopped) return;
        try {
          const outcome = await sync(item);
          scope.report.count(kind, outcome);
          scope.touched.add(kind, item.record.sourceId, outcome);
          succeeded.push(item.record.sourceId);
        } catch (error) {
          if (errorKindOf(error) !== 'data') {
            // The records still queued return at once (clearing the queue would reject addAll).
            stopped ??= { error };
            return;
          }
          await recordFailure(scope, kind, item.record.sourceId, item.origin, reasonOf(error, stage), {
            record: item.record,
          });
        }
      }),
    );
  }
  // Written (or maybe written, when they failed): from now on compared with the state DB only.
  scope.snapshots.forget(
    kind,
    plan.work.map((item) => item.record.sourceId),
  );
  // Only a kind with open failures needs the UPDATE: an ordinary re-run costs no write here. An
  // unchanged row mends its own earlier refusal, not what a reconciliation found on the service
  // (an account unlinked there stays so until a write or a repair): those stay open.
  if (!scope.dryRun && scope.failureKinds.has(kind)) {
    await scope.state.failures.resolve(scope.sourceId, kind, succeeded);
    await scope.state.failures.resolve(scope.sourceId, kind, [...plan.unchanged], {
      sparing: RECONCILE_STAGE,
    });
  }
  if (stopped) throw (stopped as { error: unknown }).error;
}
