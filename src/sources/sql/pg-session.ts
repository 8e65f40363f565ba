import pg from 'pg';
import type { Logger } from '../../logging/logger.js';
import { SqlSourceError } from './errors.js';

/** What a SQL stream needs of a connection: run a statement, and let it go. */
export interface PgSession {
  query(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Array<Record<string, unknown>>; fields: Array<{ name: string }> }>;
  end(): Promise<void>;
}

export type ConnectPg = (url: string, logger: Logger) => Promise<PgSession>;

/** Arrays (tags) are parsed; every other value stays the text Postgres printed, so nothing is lost:
 * numerics keep their digits, dates are `YYYY-MM-DD`, timestamps keep their microseconds (the
 * keyset cursor is passed back exactly as read). */
const ARRAY_TYPES = new Set([1000, 1009, 1015, 1016, 1007]); // bool[], text[], varchar[], int8[], int4[]
const textTypes = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') =>
    ARRAY_TYPES.has(oid) ? pg.types.getTypeParser(oid, format ?? 'text') : (value: string) => value,
} as unknown as pg.CustomTypesConfig;

/**
 * Opens the dedicated connection of one pass. The session is read-only by default, prints times in
 * UTC with the ISO style (the cursor's text form is stable), and names itself in `pg_stat_activity`.
 */
export const connectPg: ConnectPg = async (url, logger) => {
  const client = new pg.Client({
    connectionString: url,
    types: textTypes,
    application_name: 'receivables-sync',
    connectionTimeoutMillis: 15_000,
  });
  // A connection lost while idle between units must not crash the process: the next query fails.
  client.on('error', (error) => logger.warn({ err: error.message }, 'billing database connection lost'));
  try {
    await client.connect();
    await client.query(
      "set TimeZone = 'UTC'; set DateStyle = 'ISO, YMD'; set default_transaction_read_only = on",
    );
  } catch (error) {
    await client.end().catch(() => undefined);
    // pg's messages name the host and the user at most, never the password of the URL.
    throw new SqlSourceError(
      'SQL_CONNECT_FAILED',
      `cannot connect to the billing database: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return {
    query: async (text, values) => {
      const result = await client.query({ text, values: values ?? [] });
      return { rows: result.rows as Array<Record<string, unknown>>, fields: result.fields };
    },
    end: () => client.end(),
  };
};
