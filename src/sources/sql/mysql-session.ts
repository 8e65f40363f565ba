import type { Connection, ConnectionOptions, RowDataPacket, TypeCast } from 'mysql2/promise';
import { messageOf } from '../../domain/errors.js';
import { SqlSourceError } from './errors.js';
import type { KeysetSyntax } from './keyset-query.js';
import { type ConnectSql, type SqlDialect, SqlReadError } from './sql-dialect.js';

/**
 * MySQL 8 and MariaDB 10.6+ through mysql2, over the text protocol: the server prints every value,
 * and the session keeps that text instead of a JS number or Date, so nothing is rounded.
 *
 * - DECIMAL, DOUBLE and FLOAT: the server's text (`DOUBLE(24,8)`, as Dolibarr stores amounts,
 *   prints `1440.00000000`); the amount check then keeps it when the digits past the kept ones are
 *   zeros, and refuses it otherwise (`0.30000000000000004`, `1e21`).
 * - BIGINT: text. DATE: `YYYY-MM-DD`. DATETIME: zone-less text (the source's `timeZone` says where it
 *   is). TIMESTAMP: the session's zone is UTC, so it prints in UTC whatever the server's zone, and is
 *   given an explicit `+00:00` (a MariaDB `timestamp` is otherwise shown in the server's zone, and
 *   an hour repeats there each autumn).
 * - BIT(1): a boolean (tombstone flags); TINYINT(1) stays a number, `1` is a truthy flag.
 */
const exactText: TypeCast = (field, next) => {
  switch (field.type) {
    case 'DECIMAL':
    case 'NEWDECIMAL':
    case 'DOUBLE':
    case 'FLOAT':
    case 'LONGLONG':
    case 'DATE':
    case 'NEWDATE':
    case 'DATETIME':
    case 'DATETIME2':
    case 'TIME':
    case 'TIME2':
    case 'YEAR':
      return field.string();
    case 'TIMESTAMP':
    case 'TIMESTAMP2': {
      const text = field.string();
      return text === null ? null : `${text}${UTC_SUFFIX}`;
    }
    case 'BIT': {
      if (field.length !== 1) return next();
      const bit = field.buffer();
      return bit === null ? null : bit[0] === 1;
    }
    default:
      return next();
  }
};

const UTC_SUFFIX = '+00:00';
const UTC_TIMESTAMP_RE = /^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?)\+00:00$/;

/** MariaDB's `max_statement_time` and MySQL's `max_execution_time` errors. */
const TIMEOUT_ERRNOS = new Set([1969, 3024]);

/** The URL's query parameters this adapter understands (anything else is refused, never ignored). */
const URL_PARAMS = ['ssl'];

/** `mysql://user:password@host:3306/database?ssl=true` as mysql2 options. */
export function mysqlConnectionOptions(url: string): ConnectionOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    // The URL itself is not quoted: it may hold a password.
    throw new SqlSourceError('SQL_CONFIG_INVALID', 'the database URL cannot be read as a URL', {
      cause: error,
    });
  }
  const unknown = [...parsed.searchParams.keys()].filter((key) => !URL_PARAMS.includes(key));
  if (unknown.length > 0) {
    throw new SqlSourceError(
      'SQL_CONFIG_INVALID',
      `the database URL's parameter ${unknown.join(', ')} is not understood for MySQL/MariaDB; only ` +
        `${URL_PARAMS.join(', ')} (ssl=true: TLS with the server's certificate verified)`,
    );
  }
  const ssl = parsed.searchParams.get('ssl');
  return {
    host: decodeURIComponent(parsed.hostname) || '127.0.0.1',
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database: decodeURIComponent(parsed.pathname.slice(1)) || undefined,
    ...(ssl === 'true' || ssl === 'required' ? { ssl: {} } : {}),
  };
}

/** `10.11.19-MariaDB-0+deb12u1` -> MariaDB 10.11.19; `8.0.36` -> MySQL 8.0.36. */
export function serverOf(version: string): { mariadb: boolean; label: string; supported: boolean } {
  const mariadb = /mariadb/i.test(version);
  const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(version) ?? []).slice(1).map(Number);
  const number = /^[\d.]+/.exec(version)?.[0] ?? version;
  const supported = mariadb ? major > 10 || (major === 10 && minor >= 6) : major >= 8;
  return { mariadb, label: `${mariadb ? 'MariaDB' : 'MySQL'} ${number}`, supported };
}

/**
 * Opens the pass's connection: every transaction read-only, times in UTC, the statement timeout
 * set once (MariaDB's `max_statement_time` in seconds, MySQL's `max_execution_time` in
 * milliseconds, which applies to SELECT only: every read is one). Autocommit stays on, so each read
 * is its own short transaction, with no round trip to begin or end it.
 */
export const connectMysql: ConnectSql = async (url, options, logger) => {
  const connectionOptions = mysqlConnectionOptions(url);
  // Loaded on first use: a process that reads no MySQL database (most commands) does not pay its ~45 ms.
  const mysql = (await import('mysql2/promise')).default;
  let connection: Connection | undefined;
  let server: ReturnType<typeof serverOf>;
  try {
    connection = await mysql.createConnection({
      ...connectionOptions,
      connectTimeout: 15_000,
      typeCast: exactText,
      dateStrings: true,
      decimalNumbers: false,
      supportBigNumbers: true,
      bigNumberStrings: true,
      multipleStatements: false,
    });
    // A connection lost while idle between units must not crash the process: the next read fails.
    connection.on('error', (error: Error) =>
      logger.warn({ err: error.message }, 'billing database connection lost'),
    );
    const [rows] = await connection.query<RowDataPacket[]>('select version() as v');
    server = serverOf(String(rows[0]?.v ?? ''));
    const ms = Math.trunc(options.statementTimeoutMs);
    const timeout = server.mariadb ? `max_statement_time = ${ms / 1000}` : `max_execution_time = ${ms}`;
    await connection.query(`set session time_zone = '+00:00', session ${timeout}`);
    await connection.query('set session transaction read only');
  } catch (error) {
    await connection?.end().catch(() => connection?.destroy());
    // mysql2's messages name the user and the host at most, never the URL's password.
    throw new SqlSourceError(
      'SQL_CONNECT_FAILED',
      `cannot connect to the billing database: ${messageOf(error)}`,
      { cause: error },
    );
  }
  if (!server.supported) {
    logger.warn({ server: server.label }, 'MySQL 8 and MariaDB 10.6 or later are supported; reading anyway');
  }
  const open = connection;
  return {
    server: server.label,
    read: async (statement) => {
      try {
        // The keyset syntax inlines its values (none here): mysql2 leaves the text as it is.
        const [rows, fields] = await open.query<RowDataPacket[]>({
          sql: statement.text,
          values: statement.values,
        });
        return {
          rows: rows as Array<Record<string, unknown>>,
          fields: fields.map((f) => ({ name: f.name })),
        };
      } catch (error) {
        const timedOut = TIMEOUT_ERRNOS.has((error as { errno?: number }).errno ?? 0);
        throw new SqlReadError(messageOf(error), timedOut, { cause: error });
      }
    },
    end: () => open.end().catch(() => open.destroy()),
  };
};

/**
 * A string literal that reads the same whether or not `NO_BACKSLASH_ESCAPES` is on: quotes doubled,
 * backslashes as `char(92)`. A cursor value written back in a TIMESTAMP's `+00:00` form loses it:
 * the session is in UTC, and MariaDB reads no offset in a datetime literal.
 */
export function mysqlLiteral(value: string): string {
  const text = UTC_TIMESTAMP_RE.exec(value)?.[1] ?? value;
  const parts = text.split('\\').map((part) => `'${part.replaceAll("'", "''")}'`);
  return parts.length === 1 ? parts[0]! : `concat(${parts.join(', char(92 using utf8mb4), ')})`;
}

/**
 * MySQL/MariaDB spell a keyset page with literals (the text protocol sends the server's own text
 * back; mysql2's client-side `?` would also rewrite a `?` inside the user's query) and with the
 * row comparison expanded: `(ts, id) > (a, b)` gets no index range from MariaDB (EXPLAIN on 10.11:
 * a full scan and a sort per page) nor MySQL 8 (its manual says so), `ts > a or (ts = a and id > b)`
 * does.
 */
export const mysqlKeyset: KeysetSyntax = {
  column: (name) => `q.\`${name}\``,
  bind: (value) => (typeof value === 'number' ? String(Math.trunc(value)) : mysqlLiteral(value)),
  since: (ts, cursorTs, seconds) => `${ts} >= cast(${cursorTs} as datetime(6)) - interval ${seconds} second`,
  after: (ts, id, a, b) => `(${ts} > ${a} or (${ts} = ${a} and ${id} > ${b}))`,
};

export const mysqlDialect: SqlDialect = {
  name: 'MySQL/MariaDB',
  schemes: ['mysql', 'mariadb'],
  connect: connectMysql,
  keyset: mysqlKeyset,
};
