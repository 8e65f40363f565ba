/**
 * API calls per record, and the engine's throughput on an unchanged re-run.
 *
 *   npx tsx bench/sync.ts [--accounts N] [--invoices N] [--warmup N] [--repeat N]
 *   DATABASE_URL=postgres://... npx tsx bench/sync.ts     # and the same passes on Postgres, compared
 *
 * Generates a drop of N accounts and M invoices (1 % of the invoices partly paid, which costs one
 * PATCH each after the create), syncs it into an in-process sandbox with an embedded state DB, then:
 * - first sync: writes (creates apart) and lookups (GETs) per record, and their total; goal: creates +
 *   lookups <= 1.005 per record (the paid invoices' PATCHes are the data's, not the engine's);
 * - unchanged re-run (the same rows in new files, --repeat times after --warmup passes): writes
 *   (goal 0), and rows/s of the whole pass (claim, checksum, parse + validate + diff, archive),
 *   compared with bare csv-parse reading the same files in the source's own mode (array rows, its
 *   options), medians of the repeats; and, for continuity, with csv-parse `columns: true` (rows as
 *   objects, about 1.6x slower), the baseline of earlier versions and of the old goal (>= 0.5);
 * - 1 % changed re-run: writes per changed record.
 * - the state DB (`sync-state-db.ts`), in processes of their own as `sync --once` runs: open +
 *   migrate (cold, and re-open of the bench's state), an unchanged re-run, their peak RSS; with
 *   DATABASE_URL set, the whole bench again on Postgres in a child process, and embedded ÷ Postgres.
 * Prints one line per figure, then one JSON line.
 */
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { StaticTokenProvider } from '../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../src/api/client.js';
import { createRateLimiter } from '../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../src/app/sync-api.js';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { startSandbox } from '../src/sandbox/server.js';
import { CSV_PARSE_OPTIONS } from '../src/sources/csv/csv-rows.js';
import { createCsvSource } from '../src/sources/csv/index.js';
import { openStateDatabase } from '../src/state/database.js';
import { DropFilesRepository } from '../src/state/drop-files.js';
import { syncStateRepos } from '../src/state/repositories.js';
import { runSync, type SourceSummary } from '../src/sync/run-sync.js';
import { measureStateDbs } from './sync-state-db.js';

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
// The embedded state DB; with DATABASE_URL set, Postgres as well: this script again in a child
// process (BENCH_STATE=postgres: a schema of its own, left to the parent, which drops it).
const kind = process.env.BENCH_STATE === 'postgres' ? 'postgres' : 'embedded';
const databaseUrl = kind === 'postgres' ? process.env.DATABASE_URL || null : null;
if (kind === 'postgres' && !databaseUrl) throw new Error('BENCH_STATE=postgres needs DATABASE_URL');
const schema = databaseUrl ? `bench_sync_${process.pid}` : undefined;
const state = await openStateDatabase({
  databaseUrl,
  dataDir: join(dir, 'state'),
  ...(schema ? { schema } : {}),
});
const calls = { GET: 0, write: 0, POST: 0 };
const countingFetch: typeof fetch = (input, init) => {
  if ((init?.method ?? 'GET') === 'GET') calls.GET++;
  else calls.write++;
  if (init?.method === 'POST') calls.POST++;
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

async function pass(): Promise<{
  summary: SourceSummary;
  gets: number;
  writes: number;
  creates: number;
  ms: number;
}> {
  calls.GET = 0;
  calls.write = 0;
  calls.POST = 0;
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
  return {
    summary,
    gets: calls.GET,
    writes: calls.write,
    creates: calls.POST,
    ms: performance.now() - started,
  };
}

/**
 * Milliseconds bare csv-parse takes to read a file (after two reads to warm up): in the source's
 * own mode (`same`: array rows, its options), or into row objects (`columns: true`, the old baseline).
 */
async function bareParse(path: string, mode: 'same' | 'columns'): Promise<number> {
  let ms = 0;
  for (let read = 0; read < 3; read++) {
    const started = performance.now();
    const parser = parse(mode === 'same' ? CSV_PARSE_OPTIONS : { columns: true });
    for await (const _ of createReadStream(path).pipe(parser)) {
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
const columnsRates: number[] = [];
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
  let columnsMs = 0;
  for (const file of files) bareMs += await bareParse(file, 'same');
  for (const file of files) columnsMs += await bareParse(file, 'columns');
  const run = await pass();
  if (r <= WARMUP) continue;
  bareRates.push(records / (bareMs / 1000));
  columnsRates.push(records / (columnsMs / 1000));
  unchangedPasses.push(run);
}
const unchanged = unchangedPasses.reduce((worst, p) =>
  p.writes + p.gets > worst.writes + worst.gets ? p : worst,
);
const engineRowsPerSecond = median(unchangedPasses.map((p) => records / (p.ms / 1000)));
const bareRowsPerSecond = median(bareRates);
const columnsRowsPerSecond = median(columnsRates);

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
    creates: first.creates,
    writesPerRecord: +(first.writes / records).toFixed(4),
    lookupsPerRecord: +(first.gets / records).toFixed(4),
    callsPerRecord: +((first.writes + first.gets) / records).toFixed(4),
    createsAndLookupsPerRecord: +((first.creates + first.gets) / records).toFixed(4),
    failed,
    seconds: +(first.ms / 1000).toFixed(1),
  },
  unchangedRerun: {
    writes: unchanged.writes,
    lookups: unchanged.gets,
    rowsPerSecond: Math.round(engineRowsPerSecond),
    bareCsvParseRowsPerSecond: Math.round(bareRowsPerSecond),
    ratio: +(engineRowsPerSecond / bareRowsPerSecond).toFixed(3),
    columnsTrueRowsPerSecond: Math.round(columnsRowsPerSecond),
    ratioToColumnsTrue: +(engineRowsPerSecond / columnsRowsPerSecond).toFixed(3),
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
const { firstSync } = result;
console.log(
  `first sync: calls per record        ${firstSync.callsPerRecord.toFixed(4)} = writes ${firstSync.writesPerRecord.toFixed(4)} (${first.creates} creates, ${first.writes - first.creates} paid-amount PATCHes) + lookups ${firstSync.lookupsPerRecord.toFixed(4)} (${first.gets} GETs), ${failed} failed`,
);
console.log(
  `first sync: creates + lookups       ${firstSync.createsAndLookupsPerRecord.toFixed(4)} per record (goal <= 1.005)`,
);
console.log(`unchanged re-run: writes            ${unchanged.writes} (goal 0), lookups ${unchanged.gets}`);
console.log(
  `unchanged re-run: rows/s            ${result.unchangedRerun.rowsPerSecond} through parse + validate + diff; bare csv-parse in the source's mode ${result.unchangedRerun.bareCsvParseRowsPerSecond} (ratio ${result.unchangedRerun.ratio})`,
);
console.log(
  `  old baseline, columns: true       csv-parse ${result.unchangedRerun.columnsTrueRowsPerSecond} rows/s (ratio ${result.unchangedRerun.ratioToColumnsTrue}, the old goal >= 0.5: flattering, for continuity only)`,
);
console.log(
  `1% changed re-run: writes           ${changed.writes} for ${changedRecords} changed records (${result.onePercentChanged.writesPerChangedRecord} per record: an account costs PUT + PATCH source)`,
);
console.log(JSON.stringify(kind === 'postgres' ? { ...result, postgresSchema: schema } : result));
await client.close();
await state.close();
// The state DB in processes of their own, as `sync --once` runs them (bench/sync-state-db.ts). A
// Postgres run (the child below) leaves its schema to this one, which measures both alternately.
if (kind === 'embedded') {
  const dropUnchanged = (run: number, folder: string) => {
    const rows = (n: number) => rotate(range(n), 100 + run);
    const file = (name: string, header: string, lines: string[]) =>
      writeFileSync(join(folder, name), csvOf(header, lines));
    file(
      `accounts-4-${run}.csv`,
      ACCOUNT_HEADER,
      rows(ACCOUNTS).map((i) => accountLine(i, i <= changedAccounts ? 'Brest' : 'Nantes')),
    );
    file(
      `invoices-4-${run}.csv`,
      INVOICE_HEADER,
      rows(INVOICES).map((i) => invoiceLine(i, i % 100 === 0 || i <= changedInvoices + 1 ? '10.00' : '')),
    );
  };
  await measureStateDbs({
    embedded: { databaseUrl: null, dataDir: join(dir, 'state') },
    dropDir,
    sandbox,
    dropUnchanged,
  });
}
await sandbox.close();
rmSync(dir, { recursive: true, force: true });
