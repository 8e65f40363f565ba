import { SqlSourceError } from './errors.js';
import { mysqlDialect } from './mysql-session.js';
import { postgresDialect } from './pg-session.js';
import type { SqlDialect } from './sql-dialect.js';

/** The databases a SQL source can read, each chosen by its URL schemes. */
export const SQL_DIALECTS: readonly SqlDialect[] = [postgresDialect, mysqlDialect];

const ACCEPTED = SQL_DIALECTS.map((d) => `${d.schemes.map((s) => `${s}://`).join(' or ')} (${d.name})`).join(
  ', ',
);

/**
 * The dialect a connection URL's scheme chooses (`postgres://`, `mysql://`, ...). Anything else is
 * a configuration error naming the schemes accepted, said before any connection is tried. The
 * message quotes the scheme only: the rest of the URL may hold a password.
 */
export function dialectForUrl(url: string, sourceId: string): SqlDialect {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url.trim())?.[1]?.toLowerCase();
  const dialect = scheme === undefined ? undefined : SQL_DIALECTS.find((d) => d.schemes.includes(scheme));
  if (dialect !== undefined) return dialect;
  throw new SqlSourceError(
    'SQL_CONFIG_INVALID',
    `source "${sourceId}": ${scheme === undefined ? 'the database URL has no scheme' : `the database URL's scheme "${scheme}://" is not one this source reads`}; ` +
      `the scheme chooses the database: ${ACCEPTED}`,
  );
}
