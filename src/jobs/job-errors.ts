import { UnrecoverableError } from 'bullmq';
import { errorCodeOf, errorKindOf, isRetryable } from '../domain/errors.js';

/**
 * Whether retrying a job as is cannot help: the configuration, the credentials or the data must
 * change first. Decided from the error's kind and `retryable` (`CSV_DROP_DIR_MISSING`,
 * `SQL_CONFIG_INVALID`, `LOGIN_REQUIRED`, an API 401/403...); anything else (network, Redis, the
 * state DB, a 5xx, an error of no kind) may pass and is retried with backoff.
 */
export function isPermanentFailure(error: unknown): boolean {
  if (error instanceof UnrecoverableError) return true;
  return errorKindOf(error) === 'config' || !isRetryable(error);
}

/** The error a processor throws: `UnrecoverableError` (BullMQ fails the job without retry) for a permanent one. */
export function toJobError(error: unknown): Error {
  if (error instanceof UnrecoverableError) return error;
  const original = error instanceof Error ? error : new Error(String(error));
  if (!isPermanentFailure(error)) return original;
  const code = errorCodeOf(error);
  const permanent = new UnrecoverableError(code ? `${code}: ${original.message}` : original.message);
  permanent.cause = error;
  return permanent;
}

/** A job that can never succeed as queued (unknown source, unknown record). */
export const permanentJobError = (message: string): UnrecoverableError => new UnrecoverableError(message);
