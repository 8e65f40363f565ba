/**
 * `npm run bench:sql` (tsx bench/sql-source.ts): rows per second read from the SQL source.
 *
 * Creates a billing schema of its own in the Postgres of TEST_DATABASE_URL (default: the CI's
 * postgres://postgres@127.0.0.1:5432/test), fills it with generate_series, then reads it through the
 * SQL source exactly as the engine does (keyset pages, one read-only transaction per page, every row
 * converted and validated), without the API: what is measured is the source alone.
 *
 *   - full: a first pass over every row (no cursor);
 *   - incremental: a pass after 1% of the invoices changed (look-back 300 s).
 *
 * Options: --accounts 10000 --invoices 50000 --batch 1000 --runs 3
 * Prints one line per measure, then one JSON line.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { InMemoryCursorStore } from '../src/sources/ports.js';
import { createSqlSource } from '../src/sources/sql/index.js';
import { billingStreams, createBillingDb, seedBilling } from '../test/integration/sql/billing-fixture.js';
import { TEST_DATABASE_URL } from '../test/support/postgres.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '10000' },
    invoices: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
  },
});
const accounts = Number(values.accounts);
const invoices = Number(values.invoices);
const batchSize = Number(values.batch);
const runs = Number(values.runs);
const logger = pino({ level: 'silent' });

interface Measure {
  rows: number;
  ms: number;
  rowsPerSecond: number;
}

async function pass(schema: string, cursors: InMemoryCursorStore): Promise<Measure> {
  const source = createSqlSource({
    config: {
      id: 'bench',
      urlEnv: 'BENCH_URL',
      streams: billingStreams(schema),
      batchSize,
      lookbackSeconds: 300,
    },
    cursors,
    logger,
    env: { BENCH_URL: TEST_DATABASE_URL },
  });
  const started = process.hrtime.bigint();
  let rows = 0;
  for await (const unit of source.units()) {
    for await (const batch of unit.batches()) rows += batch.records.length + batch.rejected.length;
    await unit.complete({ failures: [] });
  }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const read = Object.values(source.lastPass().streams).reduce((n, s) => n + (s?.rowsRead ?? 0), 0);
  if (read !== rows) throw new Error(`rows read (${read}) and rows handed out (${rows}) differ`);
  return { rows, ms: Math.round(ms), rowsPerSecond: Math.round((rows / ms) * 1000) };
}

const best = (measures: Measure[]): Measure =>
  measures.reduce((a, b) => (b.rowsPerSecond > a.rowsPerSecond ? b : a));

async function main(): Promise<void> {
  const billing = await createBillingDb('bench_sql');
  try {
    const seeded = Date.now();
    await seedBilling(billing, { accounts, invoices });
    console.log(`seeded ${accounts} accounts and ${invoices} invoices in ${Date.now() - seeded} ms`);

    const full: Measure[] = [];
    for (let i = 0; i < runs; i++) full.push(await pass(billing.schema, new InMemoryCursorStore()));
    const f = best(full);
    console.log(
      `full pass: ${f.rows} rows in ${f.ms} ms = ${f.rowsPerSecond} rows/s (best of ${runs}, batch ${batchSize})`,
    );

    const cursors = new InMemoryCursorStore();
    await pass(billing.schema, cursors);
    const changed = Math.max(1, Math.floor(invoices / 100));
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    await client.query(
      `update "${billing.schema}".invoices set paid = total, updated_at = now() where id <= $1`,
      [changed],
    );
    await client.end();
    const inc = await pass(billing.schema, cursors);
    console.log(`incremental pass after ${changed} invoices changed: ${inc.rows} rows read in ${inc.ms} ms`);

    console.log(
      JSON.stringify({
        bench: 'sql-source',
        accounts,
        invoices,
        batchSize,
        fullRows: f.rows,
        fullMs: f.ms,
        rowsPerSecond: f.rowsPerSecond,
        incrementalChanged: changed,
        incrementalRowsRead: inc.rows,
        incrementalMs: inc.ms,
      }),
    );
  } finally {
    await billing.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
