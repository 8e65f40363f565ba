import { ERROR_CODES, type ErrorCode } from './error-codes.js';

/**
 * The one error base of the codebase. Every module's errors extend it, so what to do with an error
 * (fail the row, stop the pass, retry the job, pick an exit code) is decided from three fields, never
 * from a class name or a message:
 *
 * - `code`: stable and grep-able, a code of the catalogue (`ERROR_CODES` in error-codes.ts:
 *   `CSV_DROP_DIR_MISSING`, `LOGIN_REQUIRED`...), or the API's own
 *   (`app-invoicing.invoice.duplicate-source-id`, carried by `ApiResponseError`);
 * - `kind`: whose problem it is (see {@link ErrorKind}), the catalogue's for its code;
 * - `retryable`: whether trying the same thing again, unchanged, may succeed, the catalogue's for
 *   its code unless the case decides (`AppErrorOptions.retryable`).
 *
 * @example
 * throw new AppError('WORKER_REDIS_MISSING', '`worker` needs Redis: set REDIS_URL (or queue.redisUrl)');
 */
export class AppError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  /** The HTTP status of the answer that carried the error, when there was one (API, dashboard). */
  readonly status: number | undefined;

  /**
   * @param code a code of the catalogue, which gives the kind and retryability; or, where those are
   *   decided elsewhere, a {@link ClassifiedCode}: the API's own code classified from its answer, or
   *   another `AppError` restated with a new message (`new AppError(error, 'cannot reach …')`).
   */
  constructor(code: ErrorCode | ClassifiedCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const classified = typeof code === 'string' ? { code, ...ERROR_CODES[code] } : code;
    this.name = new.target.name;
    this.code = classified.code;
    this.kind = classified.kind;
    this.retryable = options.retryable ?? classified.retryable;
    this.status = options.status;
  }
}

/**
 * A code outside the catalogue with its kind and retryability, for the two cases where they are
 * decided elsewhere: the API's own code (`app-invoicing.invoice.duplicate-source-id`, `HTTP_503`),
 * classified from its answer's status; and an error restated with another message (an `AppError`
 * is one). Anywhere else, a code is an {@link ErrorCode}.
 */
export interface ClassifiedCode {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly retryable: boolean;
}

/**
 * - `data`: this record or this file is wrong; the rest of the pass goes on, the row is recorded as
 *   a failure (or the file is rejected) until the data changes.
 * - `infrastructure`: the API, the network, the state DB or Redis is unavailable or refused our
 *   credentials; nothing is wrong with the data, a later attempt may pass.
 * - `config`: the configuration (or a module it names) must change before anything can work.
 */
export type ErrorKind = 'data' | 'infrastructure' | 'config';

export interface AppErrorOptions {
  /**
   * Only where the code's retryability depends on the case (an alert target's answer, a token
   * endpoint's refusal, a record's failure); default: the catalogue's for the code.
   */
  retryable?: boolean | undefined;
  cause?: unknown;
  status?: number | undefined;
}

/**
 * The kind of anything thrown. An error that is not an `AppError` (a driver's socket error, a bug)
 * counts as `infrastructure`: it says nothing against the data, so no row or file is blamed for it.
 */
export function errorKindOf(error: unknown): ErrorKind {
  return error instanceof AppError ? error.kind : 'infrastructure';
}

/** Whether the same attempt may succeed later. An error that is not an `AppError` may pass. */
export function isRetryable(error: unknown): boolean {
  return error instanceof AppError ? error.retryable : true;
}

/** The stable code of an error, when it has one. */
export function errorCodeOf(error: unknown): string | undefined {
  return error instanceof AppError ? error.code : undefined;
}

/** The message of anything thrown. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
