/**
 * `npm run bench:sql` (tsx bench/sql-source.ts): rows per second read from the SQL source, on
 * Postgres and on MariaDB, over the same data.
 *
 * Creates a billing schema of its own in the Postgres of TEST_DATABASE_URL (default: the CI's
 * postgres://postgres@127.0.0.1:5432/test) and a database of its own on the MariaDB of
 * TEST_MARIADB_URL (default mysql://root@127.0.0.1:3306), fills both with the same rows, then reads
 * them through the SQL source exactly as the engine does (keyset pages, one read-only transaction per
 * page, every row converted and validated), without the API: what is measured is the source alone.
 * A third line reads the Dolibarr-shaped database of the worked example (docs/sources-sql.md: the
 * paid amount and the customer code from correlated subqueries, DOUBLE(24,8) amounts) with as many
 * customers and invoices.
 *
 *   - full: a first pass over every row (no cursor);
 *   - incremental: a pass after 1% of the invoices changed (look-back 300 s).
 *
 * Options: --accounts 10000 --invoices 50000 --batch 1000 --runs 3 --only postgres|mariadb|dolibarr
 * Prints one line per measure, then one JSON line.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import { InMemoryCursorStore } from '../src/sources/ports.js';
import { createSqlSource } from '../src/sources/sql/index.js';
import { billingStreams, createBillingDb, seedBilling } from '../test/integration/sql/billing-fixture.js';
import { createDolibarrDb, dolibarrStreams, seedDolibarr } from '../test/integration/sql/dolibarr-fixture.js';
import { TEST_DATABASE_URL } from '../test/support/postgres.js';
import { createMariadbBilling, mariadbBillingStreams } from './mariadb-billing.js';

const { values } = parseArgs({
  options: {
    accounts: { type: 'string', default: '10000' },
    invoices: { type: 'string', default: '50000' },
    batch: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
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

/** One database with the bench's data: where it is, its queries, how to change 1% of the invoices. */
interface Target {
  name: 'postgres' | 'mariadb' | 'dolibarr';
  url: string;
  streams: Record<string, unknown>;
  changeInvoices(count: number): Promise<void>;
  close(): Promise<void>;
}

async function pass(target: Target, cursors: InMemoryCursorStore): Promise<Measure> {
  const source = createSqlSource({
    config: { id: 'bench', urlEnv: 'BENCH_URL', streams: target.streams, batchSize, lookbackSeconds: 300 },
    cursors,
    logger,
    env: { BENCH_URL: target.url },
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

async function postgresTarget(): Promise<Target> {
  const billing = await createBillingDb('bench_sql');
  await seedBilling(billing, { accounts, invoices });
  const { accounts: a, invoices: i } = billingStreams(billing.schema);
  return {
    name: 'postgres',
    url: TEST_DATABASE_URL,
    streams: { accounts: a, invoices: i },
    async changeInvoices(count) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(
        `update "${billing.schema}".invoices set paid = total, updated_at = now() where id <= $1`,
        [count],
      );
      await client.end();
    },
    close: () => billing.close(),
  };
}

async function mariadbTarget(): Promise<Target> {
  const billing = await createMariadbBilling('bench_sql', { accounts, invoices });
  return {
    name: 'mariadb',
    url: billing.url,
    streams: mariadbBillingStreams(),
    async changeInvoices(count) {
      await billing.connection.query(
        'update invoices set paid = total, updated_at = utc_timestamp(6) where id <= ?',
        [count],
      );
    },
    close: () => billing.close(),
  };
}

async function dolibarrTarget(): Promise<Target> {
  const dolibarr = await createDolibarrDb('bench_sql');
  await seedDolibarr(dolibarr, { customers: accounts, invoices });
  const { accounts: a, invoices: i } = dolibarrStreams();
  return {
    name: 'dolibarr',
    url: dolibarr.url,
    streams: { accounts: a, invoices: i },
    async changeInvoices(count) {
      await dolibarr.sql(
        `insert into llx_paiement_facture (fk_paiement, fk_facture, amount)
           select rowid, rowid, 5 from llx_facture where rowid <= ?;
         update llx_facture set tms = utc_timestamp() where rowid <= ?`,
        [count, count],
      );
    },
    close: () => dolibarr.close(),
  };
}

async function measure(open: () => Promise<Target>) {
  const seeded = Date.now();
  const target = await open();
  try {
    console.log(
      `${target.name}: seeded ${accounts} accounts and ${invoices} invoices in ${Date.now() - seeded} ms`,
    );
    const full: Measure[] = [];
    for (let i = 0; i < runs; i++) full.push(await pass(target, new InMemoryCursorStore()));
    const f = best(full);
    console.log(
      `${target.name}: full pass: ${f.rows} rows in ${f.ms} ms = ${f.rowsPerSecond} rows/s (best of ${runs}, batch ${batchSize})`,
    );
    const cursors = new InMemoryCursorStore();
    await pass(target, cursors);
    const changed = Math.max(1, Math.floor(invoices / 100));
    await target.changeInvoices(changed);
    const inc = await pass(target, cursors);
    console.log(
      `${target.name}: incremental pass after ${changed} invoices changed: ${inc.rows} rows read in ${inc.ms} ms`,
    );
    return {
      fullRows: f.rows,
      fullMs: f.ms,
      rowsPerSecond: f.rowsPerSecond,
      incrementalChanged: changed,
      incrementalRowsRead: inc.rows,
      incrementalMs: inc.ms,
    };
  } finally {
    await target.close();
  }
}

async function main(): Promise<void> {
  const targets = { postgres: postgresTarget, mariadb: mariadbTarget, dolibarr: dolibarrTarget };
  const chosen = values.only
    ? [values.only as keyof typeof targets]
    : (Object.keys(targets) as Array<keyof typeof targets>);
  const results: Record<string, unknown> = {};
  for (const name of chosen) results[name] = await measure(targets[name]);
  console.log(JSON.stringify({ bench: 'sql-source', accounts, invoices, batchSize, ...results }));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
