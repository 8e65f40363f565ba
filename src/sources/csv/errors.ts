import type { ErrorCode } from '../../domain/error-codes.js';
import { AppError } from '../../domain/errors.js';

/**
 * Stable codes of the CSV source's own errors (not row problems: those are data, reported per row):
 * the catalogue's `CSV_*` but `CSV_PARSE_FAILED` (a file that cannot be read as CSV: `CsvParseFailure`).
 */
export type CsvSourceErrorCode = Exclude<Extract<ErrorCode, `CSV_${string}`>, 'CSV_PARSE_FAILED'>;

/**
 * An error of the CSV source; none is worth retrying as is (the configuration, the upload or the
 * caller must change), but a full disk (`CSV_DROP_DIR_FULL`: it heals once space is freed).
 */
export class CsvSourceError extends AppError {
  declare readonly code: CsvSourceErrorCode;
  constructor(code: CsvSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}

const DISK_FULL: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

/**
 * `CSV_DROP_DIR_FULL` for a full disk met doing `what` (`the report of invoices.csv could not be
 * written in /drop/.processing`); any other error as it is.
 */
export function diskFullOr(error: unknown, what: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === undefined || !DISK_FULL.has(code)) return error;
  return new CsvSourceError(
    'CSV_DROP_DIR_FULL',
    `disk full: ${what} (${code}): free space there; the file goes back to the drop folder and the ` +
      'next pass reads it again',
    { cause: error },
  );
}
