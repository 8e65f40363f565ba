import { AppError, type ErrorKind } from '../../domain/errors.js';

/** Stable codes of the CSV source's own errors (not row problems: those are data, reported per row). */
export type CsvSourceErrorCode =
  /** A `mapping` target names no contract column. */
  | 'CSV_MAPPING_INVALID'
  /** The drop folder does not exist or is not a directory. */
  | 'CSV_DROP_DIR_MISSING'
  /**
   * A working folder (`.processing`, `archive`, `archive/<day>`, `rejected`) is a symbolic link or
   * not a folder: files moved or written there would land outside the drop folder.
   */
  | 'CSV_DROP_DIR_UNSAFE'
  /** The engine called `complete` before draining `batches()`, or drained it twice. */
  | 'CSV_UNIT_MISUSED'
  /**
   * No space left (ENOSPC, EDQUOT) to write a file's report or to archive it: infrastructure, the
   * file goes back to the drop folder and the next pass with space reads it again.
   */
  | 'CSV_DROP_DIR_FULL'
  /** An uploaded file's name cannot be dropped (empty, hidden, too long) or matches no kind (`files:`). */
  | 'CSV_UPLOAD_NAME_REFUSED'
  /** An uploaded file is larger than the dashboard takes (`dashboard.uploadMaxMb`). */
  | 'CSV_UPLOAD_TOO_LARGE'
  /** No upload waits under that id (synced or discarded already, or never staged). */
  | 'CSV_UPLOAD_UNKNOWN'
  /** Every free name for an upload in the drop folder matches another kind, or none is left. */
  | 'CSV_UPLOAD_NAME_TAKEN';

/**
 * An error of the CSV source; none is worth retrying as is (the configuration or the caller must
 * change), but a full disk (`infrastructure`, retryable: it heals once space is freed).
 */
export class CsvSourceError extends AppError {
  declare readonly code: CsvSourceErrorCode;
  constructor(
    code: CsvSourceErrorCode,
    message: string,
    options: { cause?: unknown; kind?: ErrorKind; retryable?: boolean } = {},
  ) {
    super(code, message, {
      cause: options.cause,
      kind: options.kind ?? 'config',
      retryable: options.retryable ?? false,
    });
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
    { cause: error, kind: 'infrastructure', retryable: true },
  );
}
