/**
 * The one error base of the codebase. Every module's errors extend it, so what to do with an error
 * (fail the row, stop the pass, retry the job, pick an exit code) is decided from three fields, never
 * from a class name or a message:
 *
 * - `code`: stable and grep-able (`CSV_DROP_DIR_MISSING`, `LOGIN_REQUIRED`, the API's own
 *   `app-invoicing.invoice.duplicate-source-id`...);
 * - `kind`: whose problem it is (see {@link ErrorKind});
 * - `retryable`: whether trying the same thing again, unchanged, may succeed.
 *
 * @example
 * throw new AppError('CSV_DROP_DIR_MISSING', `drop folder ${dir} does not exist`, { kind: 'config' });
 */
export class AppError extends Error {
  readonly code: string;
  readonly kind: ErrorKind;
  readonly retryable: boolean;
  /** The HTTP status of the answer that carried the error, when there was one (API, dashboard). */
  readonly status: number | undefined;

  constructor(code: string, message: string, options: AppErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.kind = options.kind;
    this.retryable = options.retryable ?? false;
    this.status = options.status;
  }
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
  kind: ErrorKind;
  /** Default false. */
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
