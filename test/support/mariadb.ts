import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';

/** The CI machine's MariaDB (root, no password; `.ci/run` starts it); override with TEST_MARIADB_URL. */
export const TEST_MARIADB_URL = process.env.TEST_MARIADB_URL ?? 'mysql://root@127.0.0.1:3306';

/** A fresh database name, so each test file has its own tables and files run in parallel. */
export const uniqueDatabase = (prefix: string) =>
  `rs_${prefix.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;

/** The server's URL with `database` as its path: what a source's `urlEnv` holds. */
export function mariadbUrl(database: string): string {
  const url = new URL(TEST_MARIADB_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * An administrative connection (several statements per query allowed), in UTC so the fixtures'
 * TIMESTAMP literals mean what they say. Not the source's session: that one is the code under test.
 */
export async function adminConnection(database?: string): Promise<mysql.Connection> {
  const url = new URL(TEST_MARIADB_URL);
  const connection = await mysql.createConnection({
    host: url.hostname,
    port: url.port === '' ? 3306 : Number(url.port),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ...(database ? { database } : {}),
    multipleStatements: true,
    timezone: 'Z',
  });
  await connection.query("set time_zone = '+00:00'");
  return connection;
}

export async function dropDatabase(database: string): Promise<void> {
  const connection = await adminConnection();
  try {
    await connection.query(`drop database if exists \`${database}\``);
  } finally {
    await connection.end();
  }
}
