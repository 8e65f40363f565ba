/**
 * `npm run bench:singer` (builds, then tsx bench/singer.ts): the Singer target against the CSV
 * source on the same records, in the BUILT CLI's own processes, against the CLI's `sandbox` (its
 * quota raised so the rate limit is not what is measured).
 *
 * 100,000 records (`--records`; 1 account for 99 invoices), written once as a Singer tap's output
 * (Stripe-shaped: SCHEMA messages, RECORDs with amounts in cents and lower-case currencies,
 * `date-time` strings, a STATE every 1,000 records) and once as the contract's CSV files. Each is
 * synced from scratch into a sandbox of its own: `receivables-sync target` with the tap's output on
 * its stdin, and `sync --once` of the drop folder. For each: wall time, CPU time, peak RSS (VmHWM,
 * written at exit by bench/cli-usage.cjs), API requests. Goals (issue 27): the target's wall time
 * within 1.1x the CSV source's, its peak RSS <= 250 MB. On the embedded state DB, or on Postgres
 * when DATABASE_URL is set (a schema of its own per run, dropped after). Prints one line per
 * figure, then one JSON line.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { startCliSandbox } from './cli-sandbox.js';
import { dropSchemas } from './sync-state-db.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'receivables-sync.js');
const USAGE_PRELOAD = join(import.meta.dirname, 'cli-usage.cjs');
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RECORDS = arg('records', 100_000);
const ACCOUNTS = Math.max(1, Math.round(RECORDS / 100));
const INVOICES = RECORDS - ACCOUNTS;
const RATIO_GOAL = 1.1;
const RSS_GOAL_MB = 250;

interface Figures {
  seconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  created: number;
  stdoutLines: number;
}

/** Writes a file line by line, waiting on the stream when it is full. */
async function writeLines(file: string, lines: Iterable<string>): Promise<void> {
  const out = createWriteStream(file);
  for (const line of lines) if (!out.write(`${line}\n`)) await once(out, 'drain');
  out.end();
  await finished(out);
}

const customerId = (i: number) => `cus_${String(i + 1).padStart(8, '0')}`;
const day = (i: number) => `2026-01-${String((i % 28) + 1).padStart(2, '0')}`;

function* tapOutput(): Generator<string> {
  yield JSON.stringify({
    type: 'SCHEMA',
    stream: 'customers',
    key_properties: ['id'],
    schema: {
      type: ['null', 'object'],
      properties: {
        id: { type: 'string' },
        name: { type: ['null', 'string'] },
        currency: { type: ['null', 'string'] },
        address: { type: ['null', 'object'], properties: { city: { type: ['null', 'string'] } } },
        created: { type: ['null', 'string'], format: 'date-time' },
      },
    },
  });
  yield JSON.stringify({
    type: 'SCHEMA',
    stream: 'invoices',
    key_properties: ['id'],
    schema: {
      type: ['null', 'object'],
      properties: {
        id: { type: 'string' },
        number: { type: ['null', 'string'] },
        customer: { type: ['null', 'string'] },
        currency: { type: ['null', 'string'] },
        created: { type: ['null', 'string'], format: 'date-time' },
        due_date: { type: ['null', 'string'], format: 'date-time' },
        total: { type: ['null', 'integer'] },
        tax: { type: ['null', 'integer'] },
        amount_paid: { type: ['null', 'integer'] },
        status: { type: ['null', 'string'] },
      },
    },
  });
  const extracted = '2026-01-30T00:00:00.000000Z';
  let n = 0;
  const state = () => JSON.stringify({ type: 'STATE', value: { bookmarks: { invoices: { created: n } } } });
  for (let i = 0; i < ACCOUNTS; i++) {
    n++;
    yield JSON.stringify({
      type: 'RECORD',
      stream: 'customers',
      time_extracted: extracted,
      record: {
        id: customerId(i),
        name: `Customer ${i + 1}`,
        currency: 'eur',
        address: { city: 'Nantes' },
        created: `${day(i)}T09:00:00.000000Z`,
      },
    });
    if (n % 1000 === 0) yield state();
  }
  for (let i = 0; i < INVOICES; i++) {
    n++;
    yield JSON.stringify({
      type: 'RECORD',
      stream: 'invoices',
      time_extracted: extracted,
      record: {
        id: `in_${String(i + 1).padStart(10, '0')}`,
        number: `F-${i + 1}`,
        customer: customerId(i % ACCOUNTS),
        currency: 'eur',
        created: `${day(i)}T09:05:00.000000Z`,
        due_date: `2026-02-${String((i % 28) + 1).padStart(2, '0')}T00:00:00.000000Z`,
        total: 12000,
        tax: 2000,
        amount_paid: i % 100 === 0 ? 1000 : 0,
        status: 'open',
      },
    });
    if (n % 1000 === 0) yield state();
  }
  yield state();
}

function* csvAccounts(): Generator<string> {
  yield 'sourceId,fullName,currencyCode,billingAddress.city';
  for (let i = 0; i < ACCOUNTS; i++) yield `${customerId(i)},Customer ${i + 1},EUR,Nantes`;
}

function* csvInvoices(): Generator<string> {
  yield 'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,paidAmount';
  for (let i = 0; i < INVOICES; i++) {
    const paid = i % 100 === 0 ? '10.00' : '0.00';
    yield `in_${String(i + 1).padStart(10, '0')},${customerId(i % ACCOUNTS)},F-${i + 1},${day(i)},2026-02-${String((i % 28) + 1).padStart(2, '0')},120.00,20.00,${paid}`;
  }
}

const SINGER_SOURCE = {
  id: 'stripe',
  type: 'singer',
  streams: {
    customers: {
      kind: 'accounts',
      columns: {
        sourceId: 'id',
        fullName: 'name',
        currencyCode: 'currency',
        'billingAddress.city': 'address.city',
      },
    },
    invoices: {
      kind: 'invoices',
      minorUnits: true,
      columns: {
        sourceId: 'id',
        number: 'number',
        accountSourceId: 'customer',
        issuedDate: 'created',
        dueDate: 'due_date',
        totalAmount: 'total',
        taxAmount: 'tax',
        paidAmount: 'amount_paid',
      },
    },
  },
};

/** One CLI process to its end, `input` (a file) on its stdin; its figures. */
async function runCli(args: string[], cwd: string, env: NodeJS.ProcessEnv, input?: string): Promise<Figures> {
  const usageFile = join(cwd, 'usage.json');
  rmSync(usageFile, { force: true });
  const started = performance.now();
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...env, NODE_OPTIONS: `--require ${USAGE_PRELOAD}`, BENCH_USAGE_FILE: usageFile },
    stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  if (input) createReadStream(input).pipe(child.stdin!);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0)
    throw new Error(`${args.join(' ')} ended with ${code}:\n${stdout.slice(-2000)}\n${stderr.slice(-2000)}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { peakRssMb: number; cpuMs: number };
  const report = `${stdout}\n${stderr}`;
  const created = [...report.matchAll(/created (\d+)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  return {
    seconds,
    cpuSeconds: usage.cpuMs / 1000,
    peakRssMb: usage.peakRssMb,
    created,
    stdoutLines: stdout.split('\n').filter((l) => l !== '').length,
  };
}

async function measure(
  kind: 'target' | 'csv',
  scratch: string,
  files: { tap: string; accounts: string; invoices: string },
): Promise<Figures> {
  const sandbox = await startCliSandbox(BIN);
  const cwd = join(scratch, kind);
  mkdirSync(join(cwd, 'drop'), { recursive: true });
  const schema = `bench_singer_${kind}_${process.pid}`;
  const env: NodeJS.ProcessEnv = { ...process.env, ...sandbox.env };
  if (process.env.DATABASE_URL) env.DATABASE_SCHEMA = schema;
  const source =
    kind === 'target'
      ? `  - ${JSON.stringify(SINGER_SOURCE)}\n`
      : '  - { id: erp, type: csv, dropDir: ./drop, stableSeconds: 0 }\n';
  await writeLines(join(cwd, 'receivables-sync.yaml'), [`state:\n  dataDir: ./state\nsources:\n${source}`]);
  try {
    if (kind === 'target') return await runCli(['target', '--source', 'stripe'], cwd, env, files.tap);
    await Promise.all([
      writeLines(
        join(cwd, 'drop', 'accounts.csv'),
        readFileSync(files.accounts, 'utf8').split('\n').filter(Boolean),
      ),
      writeLines(
        join(cwd, 'drop', 'invoices.csv'),
        readFileSync(files.invoices, 'utf8').split('\n').filter(Boolean),
      ),
    ]);
    return await runCli(['sync', '--once'], cwd, env);
  } finally {
    sandbox.child.kill('SIGTERM');
    if (process.env.DATABASE_URL) await dropSchemas(process.env.DATABASE_URL, [schema]);
  }
}

const line = (f: Figures) =>
  `${f.seconds.toFixed(1)} s, CPU ${f.cpuSeconds.toFixed(1)} s, peak RSS ${f.peakRssMb} MB, created ${f.created}`;

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'rs-bench-singer-'));
  try {
    const files = {
      tap: join(scratch, 'tap.jsonl'),
      accounts: join(scratch, 'accounts.csv'),
      invoices: join(scratch, 'invoices.csv'),
    };
    await writeLines(files.tap, tapOutput());
    await writeLines(files.accounts, csvAccounts());
    await writeLines(files.invoices, csvInvoices());
    const state = process.env.DATABASE_URL ? 'Postgres' : 'the embedded state DB';
    console.log(`${RECORDS} records (${ACCOUNTS} accounts, ${INVOICES} invoices), on ${state}`);
    const csv = await measure('csv', scratch, files);
    console.log(`csv source (sync --once):        ${line(csv)}`);
    const target = await measure('target', scratch, files);
    console.log(
      `singer target (tap | target):    ${line(target)}, ${target.stdoutLines} STATE lines on stdout`,
    );
    for (const f of [csv, target])
      if (f.created !== RECORDS) throw new Error(`created ${f.created} records, not ${RECORDS}`);
    const ratio = target.seconds / csv.seconds;
    console.log(`wall time target / csv: ${ratio.toFixed(2)} (goal <= ${RATIO_GOAL})`);
    console.log(`target peak RSS: ${target.peakRssMb} MB (goal <= ${RSS_GOAL_MB} MB)`);
    const ok = ratio <= RATIO_GOAL && target.peakRssMb <= RSS_GOAL_MB;
    console.log(
      JSON.stringify({
        bench: 'singer',
        records: RECORDS,
        state,
        csv,
        target,
        ratio: Number(ratio.toFixed(3)),
        ok,
      }),
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
