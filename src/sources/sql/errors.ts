import { AppError } from '../../domain/errors.js';

/** Stable codes of the SQL source's own errors (bad rows are data: they become row problems). */
export type SqlSourceErrorCode =
  /** The configuration cannot work (no query, bad column name, the URL's variable is unset). */
  | 'SQL_CONFIG_INVALID'
  /** The billing database cannot be reached or refused the connection. */
  | 'SQL_CONNECT_FAILED'
  /** A stream's query failed (syntax, permissions, a write in the read-only transaction...). */
  | 'SQL_QUERY_FAILED'
  /** A stream's query ran longer than `statementTimeoutMs`. */
  | 'SQL_STATEMENT_TIMEOUT'
  /** A stream's query does not return a column the stream needs (a contract or cursor column). */
  | 'SQL_COLUMNS_MISSING'
  /** The engine called `complete` before draining `batches()`, or drained it twice. */
  | 'SQL_UNIT_MISUSED';

/**
 * An error of the SQL source. `retryable`: a connection fault may pass by itself; a query or a
 * configuration problem needs a fix first.
 */
export class SqlSourceError extends AppError {
  declare readonly code: SqlSourceErrorCode;
  constructor(code: SqlSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    const passing = code === 'SQL_CONNECT_FAILED' || code === 'SQL_STATEMENT_TIMEOUT';
    super(code, message, {
      cause: options.cause,
      kind: passing ? 'infrastructure' : 'config',
      retryable: passing,
    });
  }
}
