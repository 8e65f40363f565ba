import type { ErrorCode } from '../domain/error-codes.js';
import { AppError, type ClassifiedCode, type ErrorKind, errorKindOf } from '../domain/errors.js';

/** Exit codes of the contract. */
export const EXIT_OK = 0;
/** It could not run: configuration, auth, unreachable API, state DB. */
export const EXIT_CANNOT_RUN = 1;
/** The pass finished but some rows failed. */
export const EXIT_ROWS_FAILED = 2;

/** The codes of the CLI's own errors: the catalogue's `CLI_*`. */
export type CliErrorCode = Extract<ErrorCode, `CLI_${string}`>;

/**
 * An error the CLI reports as one line, without a stack trace: a usage problem of a command
 * (`CLI_USAGE`, the default), sources a run left unsynced (`CLI_SOURCES_NOT_SYNCED`,
 * `CLI_SOURCES_PAUSED`), or another error restated for the terminal (its code and kind kept).
 */
export class CliError extends AppError {
  constructor(
    message: string,
    readonly exitCode = EXIT_CANNOT_RUN,
    options: { code?: CliErrorCode | ClassifiedCode; cause?: unknown } = {},
  ) {
    super(options.code ?? 'CLI_USAGE', message, { cause: options.cause });
  }

  /** `error` restated as `message` for the terminal, keeping its code, kind and retryability. */
  static restating(error: AppError, message = error.message): CliError {
    return new CliError(message, exitCodeOf(error), { code: error, cause: error });
  }
}

/**
 * The exit code of an error that ended a command. Whatever its kind (configuration, an
 * infrastructure fault, even data that stopped a command outright), the command could not run:
 * exit 1. Exit 2 (rows failed) is never an error: a pass that finished reports it from its summary.
 * A `CliError` may carry another code (`failures` exits 2 when some are open).
 */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  const byKind: Record<ErrorKind, number> = {
    config: EXIT_CANNOT_RUN,
    infrastructure: EXIT_CANNOT_RUN,
    data: EXIT_CANNOT_RUN,
  };
  return byKind[errorKindOf(error)];
}
