import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The CI machine's Postgres (trust auth); override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name so each test file has its own tables and files run in parallel. */
export const uniqueSchema = (prefix: string) =>
  `t_${prefix.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}
