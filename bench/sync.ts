/**
 * API calls per record, and the engine's throughput on an unchanged re-run.
 *
 *   npx tsx bench/sync.ts [--accounts N] [--invoices N]
 *
 * Generates a drop of N accounts and M invoices (1 % of the invoices partly paid, which costs one
 * PATCH each after the create), syncs it into an in-process sandbox with an embedded state DB, then:
 * - first sync: writes per record (goal <= 1.02) and lookups (GETs) apart;
 * - unchanged re-run (the same rows in new files): writes (goal 0), and rows/s through parse +
 *   validate + diff, compared with bare csv-parse on the same invoices file (goal >= 0.5 of it);
 * - 1 % changed re-run: writes per changed record.
 * Prints one line per figure, then one JSON line.
 */
import { createReadStream, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import { StaticTokenProvider } from '../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../src/api/client.js';
import { createRateLimiter } from '../src/api/rate-limit/create-rate-limiter.js';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { startSandbox } from '../src/sandbox/server.js';
import { createCsvSource } from '../src/sources/csv/index.js';
import { openStateDatabase } from '../src/state/database.js';
import { DropFilesRepository } from '../src/state/drop-files.js';
import { FailuresRepository } from '../src/state/failures.js';
import { PendingWritesRepository } from '../src/state/pending-writes.js';
import { RecordMapRepository } from '../src/state/record-map.js';
import { RunsRepository } from '../src/state/runs.js';
import { ClientSyncApi } from '../src/sync/client-adapter.js';
import { runSync, type SourceSummary } from '../src/sync/run-sync.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ACCOUNTS = arg('accounts', 200);
const INVOICES = arg('invoices', 4000);

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
const write = (name: string, header: string, lines: string[]) =>
  writeFileSync(join(dropDir, name), `${header}\n${lines.join('\n')}\n`);
const range = (n: number) => Array.from({ length: n }, (_, k) => k + 1);

const sandbox = await startSandbox({ port: 0 }, { rateLimit: { quota: 1_000_000, windowSeconds: 60 } });
const logger = createLogger({ level: 'error' });
const state = await openStateDatabase({ databaseUrl: null, dataDir: join(dir, 'state') });
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
const repos = {
  recordMap: new RecordMapRepository(state.db),
  pending: new PendingWritesRepository(state.db),
  failures: new FailuresRepository(state.db),
  runs: new RunsRepository(state.db),
};
const config = { id: 'bench', type: 'csv' as const, dropDir, stableSeconds: 0, mapping: {} };

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

async function bareParse(path: string): Promise<number> {
  const started = performance.now();
  let rows = 0;
  for await (const _ of createReadStream(path).pipe(parse({ columns: true }))) rows++;
  return rows / ((performance.now() - started) / 1000);
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

// The same rows again, in new files (another order, so not recognised by checksum).
write(
  'accounts-2.csv',
  ACCOUNT_HEADER,
  range(ACCOUNTS)
    .reverse()
    .map((i) => accountLine(i)),
);
write(
  'invoices-2.csv',
  INVOICE_HEADER,
  range(INVOICES)
    .reverse()
    .map((i) => invoiceLine(i)),
);
const bareRowsPerSecond = await bareParse(join(dropDir, 'invoices-2.csv'));
const unchanged = await pass();
const engineRowsPerSecond = records / (unchanged.ms / 1000);

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
await state.close();
await sandbox.close();
rmSync(dir, { recursive: true, force: true });
