import pg from 'pg';
import { messageOf } from '../../domain/errors.js';
import { SqlSourceError } from './errors.js';
import type { KeysetSyntax } from './keyset-query.js';
import { type ConnectSql, type SqlDialect, SqlReadError } from './sql-dialect.js';

/** Arrays (tags) are parsed; every other value stays the text Postgres printed, so nothing is lost:
 * numerics keep their digits, dates are `YYYY-MM-DD`, timestamps keep their microseconds (the
 * keyset cursor is passed back exactly as read). */
const ARRAY_TYPES = new Set([1000, 1009, 1015, 1016, 1007]); // bool[], text[], varchar[], int8[], int4[]
const textTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    ARRAY_TYPES.has(oid) ? pg.types.getTypeParser(oid, format ?? 'text') : (value: string) => value,
} as unknown as pg.CustomTypesConfig;

/** `query_canceled`: what `statement_timeout` raises. */
const QUERY_CANCELED = '57014';

/**
 * Opens the dedicated connection of one pass. The session is read-only by default, prints times in
 * UTC with the ISO style (the cursor's text form is stable; a `timestamptz` carries `+00`, a
 * `timestamp` is zone-less), and names itself in `pg_stat_activity`.
 */
export const connectPg: ConnectSql = async (url, options, logger) => {
  const client = new pg.Client({
    connectionString: url,
    types: textTypes,
    application_name: 'receivables-sync',
    connectionTimeoutMillis: 15_000,
  });
  // A connection lost while idle between units must not crash the process: the next query fails.
  client.on('error', (error) => logger.warn({ err: error.message }, 'billing database connection lost'));
  let server: string;
  try {
    await client.connect();
    await client.query(
      "set TimeZone = 'UTC'; set DateStyle = 'ISO, YMD'; set default_transaction_read_only = on",
    );
    server = String((await client.query('select version() as v')).rows[0]?.v ?? 'Postgres');
  } catch (error) {
    await client.end().catch(() => undefined);
    // pg's messages name the host and the user at most, never the password of the URL.
    throw new SqlSourceError(
      'SQL_CONNECT_FAILED',
      `cannot connect to the billing database: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const timeout = Math.trunc(options.statementTimeoutMs);
  return {
    server: server.split(' on ')[0] ?? server,
    read: async (statement) => {
      try {
        await client.query(`begin transaction read only; set local statement_timeout = ${timeout}`);
        const result = await client.query({ text: statement.text, values: statement.values });
        await client.query('commit');
        return { rows: result.rows as Array<Record<string, unknown>>, fields: result.fields };
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        const timedOut = (error as { code?: string }).code === QUERY_CANCELED;
        throw new SqlReadError(messageOf(error), timedOut, { cause: error });
      }
    },
    end: () => client.end(),
  };
};

/** Postgres spells a keyset page with `$n` parameters and a row-value comparison (index-backed). */
export const postgresKeyset: KeysetSyntax = {
  column: (name) => `q."${name}"`,
  bind: (value, values) => {
    values.push(value);
    return `$${values.length}`;
  },
  since: (ts, cursorTs, seconds) => `${ts} >= ${cursorTs}::timestamptz - make_interval(secs => ${seconds})`,
  after: (ts, id, a, b) => `(${ts}, ${id}) > (${a}, ${b})`,
};

export const postgresDialect: SqlDialect = {
  name: 'Postgres',
  schemes: ['postgres', 'postgresql'],
  connect: connectPg,
  keyset: postgresKeyset,
};
