/**
 * A drop file whose rows all fail validation, synced by the real CLI: the pass must finish, write
 * every failure to the state DB and the report, keep memory bounded, and not take the file again.
 * With `--downstream`, the rows are valid invoices that all fail after the source instead (their
 * account does not exist): the engine hands those failures to the file's unit batch by batch.
 *
 *   npx tsx bench/invalid-rows.ts [--rows 500000] [--heap-mb N] [--downstream]
 *   DATABASE_URL=postgres://... npx tsx bench/invalid-rows.ts     # the state in Postgres
 *
 * Prints the pass's wall time, its peak RSS (GNU time's maximum resident set size, or sampled from
 * /proc when /usr/bin/time is missing), the report's rows and the exit codes of the pass and of the
 * pass after it, then one JSON line. `--heap-mb` caps the CLI's V8 heap (--max-old-space-size): a
 * pass that finishes under a small cap holds little per row (RSS alone also counts garbage V8 has
 * not collected yet, as it may when memory is plenty).
 */
import { spawn } from 'node:child_process';
import {
  createReadStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { startSandbox } from '../src/sandbox/server.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 500_000);
const HEAP_MB = arg('heap-mb', 0);
const DOWNSTREAM = process.argv.includes('--downstream');
const nodeArgs = HEAP_MB > 0 ? [`--max-old-space-size=${HEAP_MB}`] : [];
const MAIN = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');
if (!existsSync(MAIN)) throw new Error('run `npm run build` first: the bench runs the built CLI');

const dir = mkdtempSync(join(tmpdir(), 'rs-bench-invalid-'));
const dropDir = join(dir, 'drop');
mkdirSync(dropDir);
const configFile = join(dir, 'receivables-sync.yaml');
writeFileSync(
  configFile,
  `state:\n  dataDir: ${join(dir, 'data')}\nsources:\n  - id: bench-csv\n    type: csv\n    dropDir: ${dropDir}\n    stableSeconds: 0\n`,
);
const header = DOWNSTREAM
  ? 'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,file,paidAmount'
  : 'sourceId,fullName,currencyCode,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,tags,updatedAt';
const lines = [header];
for (let i = 1; i <= ROWS; i++)
  lines.push(
    DOWNSTREAM
      ? `INV-${i},C-404,F-${i},2026-01-10,2026-02-09,120.00,20.00,,` // no account C-404
      : `C-${i},Customer ${i},EURO,${i} quai,Nantes,44000,FR,,`, // "EURO" is no ISO 4217 code
  );
writeFileSync(join(dropDir, DOWNSTREAM ? 'invoices.csv' : 'accounts.csv'), `${lines.join('\n')}\n`);
lines.length = 0;

// A quota the bench never reaches: it measures the pass, not the rate limit (10,000 lookups for
// 500,000 unknown invoices would take 33 minutes at 300 per minute).
const sandbox = await startSandbox({ port: 0 }, { rateLimit: { quota: 1_000_000, windowSeconds: 60 } });
const databaseUrl = process.env.DATABASE_URL || '';
const schema = databaseUrl ? `bench_invalid_${process.pid}` : '';
const env = {
  ...process.env,
  RECEIVABLES_BASE_URL: sandbox.baseUrl,
  RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken,
  RECEIVABLES_ORGANIZATION_ID: sandbox.organizationId,
  LOG_LEVEL: 'error',
  DATABASE_URL: databaseUrl,
  DATABASE_SCHEMA: schema,
  REDIS_URL: '',
};

interface Pass {
  code: number | null;
  seconds: number;
  peakRssMb: number | null;
  failed: number;
}

/** One `sync --once --json` of the built CLI, with its wall time and peak RSS. */
async function pass(): Promise<Pass> {
  const gnuTime = existsSync('/usr/bin/time');
  const rssFile = join(dir, 'rss.txt');
  const args = ['--config', configFile, 'sync', '--once', '--json'];
  const child = gnuTime
    ? spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, process.execPath, ...nodeArgs, MAIN, ...args], {
        env,
      })
    : spawn(process.execPath, [...nodeArgs, MAIN, ...args], { env });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  let sampledKb = 0;
  const sampler = setInterval(() => {
    if (gnuTime || child.pid === undefined) return;
    readFile(`/proc/${child.pid}/status`, 'utf8')
      .then((status) => {
        const hwm = /VmHWM:\s+(\d+)/.exec(status);
        if (hwm) sampledKb = Math.max(sampledKb, Number(hwm[1]));
      })
      .catch(() => undefined);
  }, 100);
  const started = performance.now();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  // GNU time writes "Command exited with non-zero status N" first when the exit code is not 0.
  const timed =
    gnuTime && existsSync(rssFile) ? (await readFile(rssFile, 'utf8')).trim().split('\n').at(-1) : '';
  const kb = timed ? Number(timed) : sampledKb;
  const last = stdout.trim().split('\n').at(-1) ?? '{}';
  if (code !== 0 && code !== 2)
    throw new Error(`the pass could not run (exit ${code}):\n${stderr.slice(-2000)}`);
  const summary = JSON.parse(last.startsWith('{') ? last : '{}');
  return {
    code,
    seconds,
    peakRssMb: kb > 0 ? Math.round(kb / 1024) : null,
    failed: (DOWNSTREAM ? summary.invoices?.failed : summary.accounts?.failed) ?? -1,
  };
}

async function reportRows(): Promise<number> {
  const archive = join(dropDir, 'archive');
  const report = readdirSync(archive, { recursive: true })
    .map(String)
    .find((f) => f.endsWith('.errors.csv'));
  if (!report) return 0;
  let rows = -1; // the header
  for await (const _ of createInterface({ input: createReadStream(join(archive, report)) })) rows++;
  return rows;
}

try {
  const first = await pass();
  const report = await reportRows();
  const waiting = readdirSync(dropDir).filter((f) => f.endsWith('.csv')).length;
  const second = await pass();
  console.log(
    `rows, all failing:        ${ROWS.toLocaleString('en')} (${DOWNSTREAM ? 'after the source' : 'invalid'})`,
  );
  console.log(`first pass:               exit ${first.code}, ${first.failed.toLocaleString('en')} failed`);
  console.log(
    `  wall time:              ${first.seconds.toFixed(1)} s (${Math.round(ROWS / first.seconds)} rows/s)`,
  );
  console.log(`  peak RSS:               ${first.peakRssMb ?? '?'} MB`);
  console.log(
    `  report rows:            ${report.toLocaleString('en')} (file archived; ${waiting} left in the folder)`,
  );
  console.log(
    `next pass:                exit ${second.code}, ${second.failed} failed, ${second.seconds.toFixed(1)} s`,
  );
  console.log(
    JSON.stringify({
      bench: 'invalid-rows',
      state: databaseUrl ? 'postgres' : 'embedded',
      rows: ROWS,
      failing: DOWNSTREAM ? 'downstream' : 'invalid',
      heapCapMb: HEAP_MB || null,
      exit: first.code,
      failed: first.failed,
      seconds: Number(first.seconds.toFixed(1)),
      peakRssMb: first.peakRssMb,
      reportRows: report,
      leftInFolder: waiting,
      nextPassExit: second.code,
      nextPassFailed: second.failed,
    }),
  );
} finally {
  await sandbox.close();
  if (schema) {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  }
  rmSync(dir, { recursive: true, force: true });
}
