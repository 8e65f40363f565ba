import { UnrecoverableError } from 'bullmq';
import { LoginRequiredError } from '../api/errors.js';
import { ConfigError } from '../config/load.js';

/**
 * Whether retrying a job as is cannot help: the configuration, the credentials or the data must
 * change first. Errors of this codebase say so themselves (`retryable: false`, with a `code`:
 * `CSV_DROP_DIR_MISSING`, `SQL_CONFIG_INVALID`, `MODULE_SOURCE_INVALID`, an API 401/403...);
 * anything else (network, Redis, the state DB, a 5xx) may pass and is retried with backoff.
 */
export function isPermanentFailure(error: unknown): boolean {
  if (
    error instanceof UnrecoverableError ||
    error instanceof LoginRequiredError ||
    error instanceof ConfigError
  ) {
    return true;
  }
  if (typeof error !== 'object' || error === null) return false;
  const { retryable, code } = error as { retryable?: unknown; code?: unknown };
  return retryable === false && typeof code === 'string';
}

/** The error a processor throws: `UnrecoverableError` (BullMQ fails the job without retry) for a permanent one. */
export function toJobError(error: unknown): Error {
  if (error instanceof UnrecoverableError) return error;
  const original = error instanceof Error ? error : new Error(String(error));
  if (!isPermanentFailure(error)) return original;
  const code = (error as { code?: unknown }).code;
  const permanent = new UnrecoverableError(
    typeof code === 'string' ? `${code}: ${original.message}` : original.message,
  );
  permanent.cause = error;
  return permanent;
}

/** A job that can never succeed as queued (unknown source, unknown record). */
export const permanentJobError = (message: string): UnrecoverableError => new UnrecoverableError(message);
