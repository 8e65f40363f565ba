/**
 * API calls per record, and the engine's throughput on an unchanged re-run.
 *
 *   npx tsx bench/sync.ts [--accounts N] [--invoices N] [--warmup N] [--repeat N]
 *   DATABASE_URL=postgres://... npx tsx bench/sync.ts     # the state in Postgres instead
 *
 * Generates a drop of N accounts and M invoices (1 % of the invoices partly paid, which costs one
 * PATCH each after the create), syncs it into an in-process sandbox with an embedded state DB, then:
 * - first sync: writes per record (goal <= 1.02) and lookups (GETs) apart;
 * - unchanged re-run (the same rows in new files, --repeat times after --warmup passes): writes
 *   (goal 0), and rows/s of the whole pass (claim, checksum, parse + validate + diff, archive),
 *   compared with bare csv-parse reading the same files (goal >= 0.5 of it), medians of the repeats;
 * - 1 % changed re-run: writes per changed record.
 * Prints one line per figure, then one JSON line.
 */
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { sql } from 'kysely';
import { StaticTokenProvider } from '../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../src/api/client.js';
import { createRateLimiter } from '../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../src/app/sync-api.js';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { startSandbox } from '../src/sandbox/server.js';
import { createCsvSource } from '../src/sources/csv/index.js';
import { openStateDatabase } from '../src/state/database.js';
import { DropFilesRepository } from '../src/state/drop-files.js';
import { syncStateRepos } from '../src/state/repositories.js';
import { runSync, type SourceSummary } from '../src/sync/run-sync.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ACCOUNTS = arg('accounts', 500);
const INVOICES = arg('invoices', 10_000);

const accountLine = (i: number, city = 'Nantes') => `C-${i},Customer ${i},EUR,${i} quai,${city},44000,FR,,`;
const invoiceLine = (i: number, paid = i % 100 === 0 ? '10.00' : '') =>
  `INV-${i},C-${(i % ACCOUNTS) + 1},F-${i},2026-01-10,2026-02-09,120.00,20.00,,,,,,${paid},`;
const ACCOUNT_HEADER =
  'sourceId,fullName,currencyCode,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,tags,updatedAt';
const INVOICE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,file,paidAmount,updatedAt';

const dir = mkdtempSync(join(tmpdir(), 'rs-bench-sync-'));
const dropDir = join(dir, 'drop');
mkdirSync(dropDir);
const csvOf = (header: string, lines: string[]) => `${header}\n${lines.join('\n')}\n`;
const write = (name: string, header: string, lines: string[]) =>
  writeFileSync(join(dropDir, name), csvOf(header, lines));
const range = (n: number) => Array.from({ length: n }, (_, k) => k + 1);

const sandbox = await startSandbox({ port: 0 }, { rateLimit: { quota: 1_000_000, windowSeconds: 60 } });
const logger = createLogger({ level: 'error' });
// The embedded state DB, or Postgres when DATABASE_URL is set (in a schema of its own, dropped after).
const databaseUrl = process.env.DATABASE_URL || null;
const schema = databaseUrl ? `bench_sync_${process.pid}` : undefined;
const state = await openStateDatabase({
  databaseUrl,
  dataDir: join(dir, 'state'),
  ...(schema ? { schema } : {}),
});
const calls = { GET: 0, write: 0 };
const countingFetch: typeof fetch = (input, init) => {
  if ((init?.method ?? 'GET') === 'GET') calls.GET++;
  else calls.write++;
  return fetch(input, init);
};
const client = new ReceivablesClient({
  baseUrl: sandbox.baseUrl,
  tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
  limiter: createRateLimiter({}),
  logger,
  fetch: countingFetch,
  concurrency: 8,
});
const repos = syncStateRepos(state.db);
const config = {
  id: 'bench',
  type: 'csv' as const,
  dropDir,
  stableSeconds: 0,
  mapping: {},
  strictColumns: false,
};

async function pass(): Promise<{ summary: SourceSummary; gets: number; writes: number; ms: number }> {
  calls.GET = 0;
  calls.write = 0;
  const started = performance.now();
  const source = createCsvSource({
    config,
    clock: systemClock,
    logger,
    ledger: new DropFilesRepository(state.db),
  });
  const summary = await runSync({
    source,
    connectionId: 'bench',
    api: new ClientSyncApi(client, sandbox.organizationId),
    state: repos,
    logger,
  });
  return { summary, gets: calls.GET, writes: calls.write, ms: performance.now() - started };
}

/** Milliseconds bare csv-parse takes to read a file into row objects (after two reads to warm up). */
async function bareParse(path: string): Promise<number> {
  let ms = 0;
  for (let read = 0; read < 3; read++) {
    const started = performance.now();
    for await (const _ of createReadStream(path).pipe(parse({ columns: true }))) {
    }
    ms = performance.now() - started;
  }
  return ms;
}

const records = ACCOUNTS + INVOICES;
write(
  'accounts.csv',
  ACCOUNT_HEADER,
  range(ACCOUNTS).map((i) => accountLine(i)),
);
write(
  'invoices.csv',
  INVOICE_HEADER,
  range(INVOICES).map((i) => invoiceLine(i)),
);
const first = await pass();
const failed = first.summary.counts.accounts.failed + first.summary.counts.invoices.failed;

// The same rows again, in new files (rotated, so not recognised by checksum): WARMUP passes that
// are not counted (the JIT compiles the hot paths of both sides during the first ones), then
// REPEAT measured passes, each after bare csv-parse read the same two files (warmed up as well).
// Medians of both, so one slow pass (a GC, a noisy neighbour) does not decide the ratio.
const WARMUP = arg('warmup', 2);
const REPEAT = arg('repeat', 5);
const rotate = (list: number[], by: number) => [...list.slice(by), ...list.slice(0, by)];
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const unchangedPasses: Awaited<ReturnType<typeof pass>>[] = [];
const bareRates: number[] = [];
for (let r = 1; r <= WARMUP + REPEAT; r++) {
  const files = [`accounts-2-${r}.csv`, `invoices-2-${r}.csv`].map((name) => join(dropDir, name));
  writeFileSync(
    files[0]!,
    csvOf(
      ACCOUNT_HEADER,
      rotate(range(ACCOUNTS), r).map((i) => accountLine(i)),
    ),
  );
  writeFileSync(
    files[1]!,
    csvOf(
      INVOICE_HEADER,
      rotate(range(INVOICES), r).map((i) => invoiceLine(i)),
    ),
  );
  let bareMs = 0;
  for (const file of files) bareMs += await bareParse(file);
  const run = await pass();
  if (r <= WARMUP) continue;
  bareRates.push(records / (bareMs / 1000));
  unchangedPasses.push(run);
}
const unchanged = unchangedPasses.reduce((worst, p) =>
  p.writes + p.gets > worst.writes + worst.gets ? p : worst,
);
const engineRowsPerSecond = median(unchangedPasses.map((p) => records / (p.ms / 1000)));
const bareRowsPerSecond = median(bareRates);

// 1 % of the accounts renamed city, 1 % more invoices paid.
const changedAccounts = Math.max(1, Math.round(ACCOUNTS / 100));
const changedInvoices = Math.max(1, Math.round(INVOICES / 100));
write(
  'accounts-3.csv',
  ACCOUNT_HEADER,
  range(ACCOUNTS).map((i) => accountLine(i, i <= changedAccounts ? 'Brest' : 'Nantes')),
);
write(
  'invoices-3.csv',
  INVOICE_HEADER,
  range(INVOICES).map((i) => invoiceLine(i, i % 100 === 0 || i <= changedInvoices + 1 ? '10.00' : '')),
);
const changed = await pass();
const changedRecords = changed.summary.counts.accounts.updated + changed.summary.counts.invoices.updated;

const result = {
  records,
  firstSync: {
    writes: first.writes,
    lookups: first.gets,
    writesPerRecord: +(first.writes / records).toFixed(4),
    failed,
    seconds: +(first.ms / 1000).toFixed(1),
  },
  unchangedRerun: {
    writes: unchanged.writes,
    lookups: unchanged.gets,
    rowsPerSecond: Math.round(engineRowsPerSecond),
    bareCsvParseRowsPerSecond: Math.round(bareRowsPerSecond),
    ratio: +(engineRowsPerSecond / bareRowsPerSecond).toFixed(3),
  },
  onePercentChanged: {
    changedRecords,
    writes: changed.writes,
    lookups: changed.gets,
    writesPerChangedRecord: +(changed.writes / Math.max(1, changedRecords)).toFixed(2),
  },
};
console.log(
  `state DB                            ${state.kind === 'postgres' ? 'Postgres (DATABASE_URL)' : 'embedded (PGlite)'}`,
);
console.log(
  `records                             ${records} (${ACCOUNTS} accounts, ${INVOICES} invoices, 1% partly paid)`,
);
console.log(
  `first sync: writes per record       ${result.firstSync.writesPerRecord} (goal <= 1.02) + ${first.gets} lookups, ${failed} failed`,
);
console.log(`unchanged re-run: writes            ${unchanged.writes} (goal 0), lookups ${unchanged.gets}`);
console.log(
  `unchanged re-run: rows/s            ${result.unchangedRerun.rowsPerSecond} through parse + validate + diff; bare csv-parse ${result.unchangedRerun.bareCsvParseRowsPerSecond} (ratio ${result.unchangedRerun.ratio}, goal >= 0.5)`,
);
console.log(
  `1% changed re-run: writes           ${changed.writes} for ${changedRecords} changed records (${result.onePercentChanged.writesPerChangedRecord} per record: an account costs PUT + PATCH source)`,
);
console.log(JSON.stringify(result));
await client.close();
if (schema) await sql`drop schema ${sql.id(schema)} cascade`.execute(state.db);
await state.close();
await sandbox.close();
rmSync(dir, { recursive: true, force: true });
