/** Exit codes of the contract. */
export const EXIT_OK = 0;
/** It could not run: configuration, auth, unreachable API, state DB. */
export const EXIT_CANNOT_RUN = 1;
/** The pass finished but some rows failed. */
export const EXIT_ROWS_FAILED = 2;

/** An error the CLI reports as one line and exit code 1, without a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = EXIT_CANNOT_RUN,
  ) {
    super(message);
    this.name = 'CliError';
  }
}
