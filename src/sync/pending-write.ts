import { isRetryable } from '../domain/errors.js';
import type { RecordKind } from '../domain/records.js';
import type { PassIdentity, PassPorts } from './pass-scope.js';

/**
 * Runs a write under an Idempotency-Key stored first; the key is dropped once the answer is final.
 * A fault that may pass keeps the key, so the next attempt (this pass or the next, after a crash
 * too) sends the same body with the same key and the API replays it instead of writing twice.
 */
export async function withPendingWrite<T>(
  scope: PassIdentity & PassPorts,
  ref: { kind: RecordKind; sourceKey: string; operation: string },
  bodyHash: string,
  send: (idempotencyKey: string) => Promise<T>,
  /**
   * Finishes the write once answered; default: drops its key. A create passes one that stores the
   * record's API id and drops the key in one transaction (`recordMap.save` with `completing`).
   */
  complete: (result: T, idempotencyKey: string) => Promise<void> = (_result, key) =>
    scope.state.pending.finish(key),
): Promise<T> {
  const key = await scope.state.pending.begin({ sourceId: scope.sourceId, ...ref }, bodyHash);
  let result: T;
  try {
    result = await send(key);
  } catch (error) {
    if (!isRetryable(error)) await scope.state.pending.finish(key);
    throw error;
  }
  await complete(result, key);
  return result;
}
