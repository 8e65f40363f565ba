import type { Logger } from '../../logging/logger.js';
import type { KeysetSyntax, SqlStatement } from './keyset-query.js';

/**
 * The seam between the SQL source and a database: how to connect and hold the pass's session, how
 * a keyset page is spelled, how the statement timeout is applied, and how values are decoded. One
 * adapter per database (`pg-session.ts`, `mysql-session.ts`), chosen by the URL's scheme
 * (`dialects.ts`); the streams, cursors and records above it are the same for every database.
 */
export interface SqlDialect {
  /** The database's name as a user knows it: `Postgres`, `MySQL/MariaDB`. */
  readonly name: string;
  /** The URL schemes that choose it, without `://`. */
  readonly schemes: readonly string[];
  readonly connect: ConnectSql;
  readonly keyset: KeysetSyntax;
}

export interface SessionOptions {
  /** Every read's time limit, in milliseconds (0: none). */
  statementTimeoutMs: number;
}

/** Opens the dedicated connection of one pass; a refused connection is a `SQL_CONNECT_FAILED`. */
export type ConnectSql = (url: string, options: SessionOptions, logger: Logger) => Promise<SqlSession>;

/** A statement's rows, and its result's column names (known even when no row came back). */
export interface SqlResult {
  rows: Array<Record<string, unknown>>;
  fields: Array<{ name: string }>;
}

/**
 * The pass's connection, read-only. Values come back exactly, never through a JS number: decimals
 * and floating-point columns as the text the database printed, big integers as text, dates as
 * `YYYY-MM-DD`, timestamps as text (with their offset when the database knows it, zone-less when it
 * does not: the source's `timeZone` then says where they are), Postgres arrays (tags) parsed.
 */
export interface SqlSession {
  /** The server that answered (`select version()`), for logs and `doctor`. */
  readonly server: string;
  /**
   * Runs one statement as its own short read-only transaction under the statement timeout: a pass
   * can take hours at the API's pace, and a transaction held that long would pin the billing
   * database's old row versions. Rejects with a `SqlReadError`.
   */
  read(statement: SqlStatement): Promise<SqlResult>;
  end(): Promise<void>;
}

/** A read the database refused or cut short; the stream turns it into a coded `SqlSourceError`. */
export class SqlReadError extends Error {
  /** The statement timeout stopped it (a retry may pass; the query may also need an index). */
  readonly timedOut: boolean;
  constructor(message: string, timedOut: boolean, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = 'SqlReadError';
    this.timedOut = timedOut;
  }
}
