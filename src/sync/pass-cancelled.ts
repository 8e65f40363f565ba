import { AppError } from '../domain/errors.js';

/**
 * A pass stopped because a user cancelled it (the dashboard's Cancel on a source's page, which
 * asks through the state DB: `RunStore.cancelRequest`). Not retryable, and no fault: `runSync`
 * releases the unit under way (a file goes back to the drop folder, a cursor stays where it was),
 * closes the run as `cancelled` and returns what the pass did until then.
 */
export class PassCancelledError extends AppError {
  constructor(
    readonly runId: string,
    readonly by: string,
  ) {
    super(
      'SYNC_PASS_CANCELLED',
      `cancelled by ${by}: the pass stopped before its next batch, the file under way put back`,
    );
  }
}
