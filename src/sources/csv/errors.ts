import { AppError } from '../../domain/errors.js';

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
  | 'CSV_UNIT_MISUSED';

/** An error of the CSV source; none is worth retrying as is (the configuration or the caller must change). */
export class CsvSourceError extends AppError {
  declare readonly code: CsvSourceErrorCode;
  constructor(code: CsvSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { cause: options.cause, kind: 'config' });
  }
}
