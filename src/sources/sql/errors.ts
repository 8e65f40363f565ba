import type { ErrorCode } from '../../domain/error-codes.js';
import { AppError } from '../../domain/errors.js';

/**
 * Stable codes of the SQL source's own errors (bad rows are data: they become row problems): the
 * catalogue's `SQL_*` (a connection fault or a timeout may pass by itself; a query or a
 * configuration problem needs a fix first).
 */
export type SqlSourceErrorCode = Extract<ErrorCode, `SQL_${string}`>;

/** An error of the SQL source. */
export class SqlSourceError extends AppError {
  declare readonly code: SqlSourceErrorCode;
  constructor(code: SqlSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
