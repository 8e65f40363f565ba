/**
 * `npm run bench:scale` (builds, then tsx bench/scale.ts): whether a first sync costs the same per
 * record at 10,000 records as at 100,000 (issue 30), in the BUILT CLI's own processes against the
 * CLI's `sandbox` (a process of its own for each pass, its quota far above what a pass sends, so
 * the rate limit is not what is measured).
 *
 * For each size of `--records` (default 10000,100000; 1000000 is accepted, about an hour of CPU
 * on either state DB): 1 account for 19 invoices, a third of the invoices paid (a create and a PATCH), in a
 * new drop folder, synced once by `sync --once --json` into a new state DB: embedded (a new data
 * folder) and, with DATABASE_URL set, Postgres (a schema of its own, dropped after). The engines
 * alternate within each size, `--rounds` times (default 1), so a change of the machine's load falls
 * on both. `--engines embedded` (or `postgres`) measures one only; `--cpu-prof DIR` writes a V8 CPU
 * profile of each CLI process there.
 *
 * For each pass: wall time, the CLI process's CPU time (per record) and peak RSS (VmHWM, written at
 * exit by bench/cli-usage.cjs), and the sandbox's CPU time (it shares the machine's cores, so it is
 * part of the wall time but not of the CLI's CPU). Then, per engine, the growth from the smallest to
 * the largest size of the CPU per record and of the wall time per record, against the goals (CPU per
 * record within 1.5×; at 100,000 records or more, peak RSS ≤ 300 MB on the embedded state DB), and
 * one JSON line.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startCliSandbox } from './cli-sandbox.js';
import { dropSchemas, median } from './sync-state-db.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'receivables-sync.js');
const USAGE_PRELOAD = join(import.meta.dirname, 'cli-usage.cjs');
/**
 * The Node that runs the CLI: this one from 22 on, else the project's Node 24 (the CLI's bin would
 * start it itself, and the figures would be those of the process that started it).
 */
const NODE =
  Number(process.versions.node.split('.')[0]) >= 22
    ? process.execPath
    : join(ROOT, 'node_modules', 'node', 'bin', 'node');

type Engine = 'embedded' | 'postgres';

const option = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const SIZES = (option('records') ?? '10000,100000').split(',').map((s) => Number(s.replace(/_/g, '')));
const ROUNDS = Number(option('rounds') ?? 1);
const CPU_PROF_DIR = option('cpu-prof');
const ENGINES: Engine[] = (
  (option('engines') ?? (process.env.DATABASE_URL ? 'embedded,postgres' : 'embedded'))
    .split(',')
    .filter((e) => e === 'embedded' || e === 'postgres') as Engine[]
).filter((e) => e === 'embedded' || process.env.DATABASE_URL);
/** Issue 30's goals: CPU per record flat within this from the smallest size to the largest. */
const CPU_GROWTH_GOAL = 1.5;
/** …and this peak RSS on the embedded state DB at 100,000 records or more. */
const RSS_GOAL_MB = 300;

if (SIZES.some((n) => !Number.isInteger(n) || n < 20) || ENGINES.length === 0 || !(ROUNDS >= 1)) {
  console.error(
    'usage: bench/scale.ts [--records 10000,100000] [--rounds N] [--engines embedded,postgres] [--cpu-prof DIR]',
  );
  process.exit(1);
}

interface PassFigures {
  records: number;
  seconds: number;
  cpuSeconds: number;
  cpuMsPerRecord: number;
  peakRssMb: number;
  /** The peaks of V8's heap and of the memory outside it (the embedded DB's WebAssembly memory), sampled each second. */
  heapTotalMb: number;
  externalMb: number;
  sandboxCpuSeconds: number;
  apiRequests: number;
  /** Postgres only: the tables read whole most (rows read by sequential scans), as the server counted them. */
  scannedTables?: string;
}

const ACCOUNT_HEADER = 'sourceId,fullName,currencyCode,billingAddress.city,updatedAt';
const INVOICE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,paidAmount,updatedAt';

/** `records` rows, 1 account for 19 invoices, a third of the invoices paid. */
function dropFiles(dropDir: string, records: number): { accounts: number; invoices: number } {
  const accounts = Math.max(1, Math.round(records / 20));
  const invoices = records - accounts;
  const stamp = '2026-01-10T09:00:00Z';
  const accountLines = Array.from(
    { length: accounts },
    (_, i) => `C-${i + 1},Customer ${i + 1},EUR,Nantes,${stamp}`,
  );
  writeFileSync(join(dropDir, 'accounts.csv'), `${ACCOUNT_HEADER}\n${accountLines.join('\n')}\n`);
  const invoiceLines = Array.from({ length: invoices }, (_, i) => {
    const paid = i % 3 === 0 ? '10.00' : '';
    return `I-${i + 1},C-${(i % accounts) + 1},F-${i + 1},2026-01-10,2026-02-09,120.00,20.00,${paid},${stamp}`;
  });
  writeFileSync(join(dropDir, 'invoices.csv'), `${INVOICE_HEADER}\n${invoiceLines.join('\n')}\n`);
  return { accounts, invoices };
}

/** CPU time (user + system) a process has used so far, from /proc (the sandbox's). */
function processCpuSeconds(pid: number): number {
  // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** One first sync of `records` rows on `engine`, in a new folder, state DB and sandbox. */
async function firstSync(
  engine: Engine,
  records: number,
  scratch: string,
  tag: string,
): Promise<PassFigures> {
  const cwd = join(scratch, tag);
  mkdirSync(join(cwd, 'drop'), { recursive: true });
  writeFileSync(
    join(cwd, 'receivables-sync.yaml'),
    'sources:\n  - id: erp\n    type: csv\n    dropDir: ./drop\n    stableSeconds: 0\nstate:\n  dataDir: ./state\n',
  );
  const { accounts, invoices } = dropFiles(join(cwd, 'drop'), records);
  // A create per record and a PATCH per paid invoice, ten times over: never the limit.
  const sandbox = await startCliSandbox(BIN, {
    node: NODE,
    quota: Math.max(1_000_000, 10 * (records + invoices)),
  });
  const schema = `bench_scale_${process.pid}_${tag.replace(/\W/g, '_')}`;
  const env: NodeJS.ProcessEnv = { ...process.env, ...sandbox.env };
  if (engine === 'postgres') env.DATABASE_SCHEMA = schema;
  else delete env.DATABASE_URL;
  const usageFile = join(cwd, 'usage.json');
  const nodeFlags = CPU_PROF_DIR
    ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF_DIR, '--cpu-prof-name', `${tag}.cpuprofile`]
    : [];
  try {
    const sandboxCpuBefore = processCpuSeconds(sandbox.child.pid!);
    const started = performance.now();
    const child = spawn(NODE, [...nodeFlags, BIN, 'sync', '--once', '--json'], {
      cwd,
      env: { ...env, NODE_OPTIONS: `--require ${USAGE_PRELOAD}`, BENCH_USAGE_FILE: usageFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    const [code] = (await once(child, 'close')) as [number | null];
    const seconds = (performance.now() - started) / 1000;
    const sandboxCpuSeconds = processCpuSeconds(sandbox.child.pid!) - sandboxCpuBefore;
    if (code !== 0) throw new Error(`${engine} ${records}: sync --once ended with ${code}:\n${stderr}`);
    const summary = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      apiRequests: number;
      accounts: { created: number };
      invoices: { created: number };
    };
    if (summary.accounts.created !== accounts || summary.invoices.created !== invoices)
      throw new Error(
        `${engine} ${records}: created ${summary.accounts.created} accounts and ${summary.invoices.created} invoices`,
      );
    const scannedTables = engine === 'postgres' ? await tablesReadWhole(schema) : undefined;
    const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as {
      peakRssMb: number;
      cpuMs: number;
      heapTotalMb: number;
      externalMb: number;
    };
    return {
      records,
      seconds,
      cpuSeconds: usage.cpuMs / 1000,
      cpuMsPerRecord: usage.cpuMs / records,
      peakRssMb: usage.peakRssMb,
      heapTotalMb: usage.heapTotalMb,
      externalMb: usage.externalMb,
      sandboxCpuSeconds,
      apiRequests: summary.apiRequests,
      ...(scannedTables ? { scannedTables } : {}),
    };
  } finally {
    sandbox.child.kill('SIGTERM');
    rmSync(cwd, { recursive: true, force: true });
    if (engine === 'postgres') await dropSchemas(process.env.DATABASE_URL!, [schema]);
  }
}

/**
 * The state DB's tables that sequential scans read most rows of in the pass (the server's own
 * counters, `pg_stat_user_tables`): a table read whole for each batch is what makes a pass's cost
 * grow with the records it has synced.
 */
async function tablesReadWhole(schema: string): Promise<string> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  try {
    // The counters reach the view some 500 ms after the statements (the stats collector's flush).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const { rows } = await client.query<{
      relname: string;
      seq_scan: string;
      seq_tup_read: string;
      idx_scan: string;
    }>(
      `select relname, seq_scan, seq_tup_read, coalesce(idx_scan, 0) as idx_scan from pg_stat_user_tables
       where schemaname = $1 order by seq_tup_read desc limit 3`,
      [schema],
    );
    return rows
      .map((r) => `${r.relname} ${r.seq_tup_read} rows in ${r.seq_scan} scans (${r.idx_scan} index scans)`)
      .join('; ');
  } finally {
    await client.end();
  }
}

const fixed = (n: number, digits = 2) => n.toFixed(digits);

function printPass(engine: Engine, round: number, f: PassFigures): void {
  console.log(
    `${engine.padEnd(8)} ${String(f.records).padStart(9)} records, round ${round}: ${fixed(f.seconds, 1)} s wall, ` +
      `CPU ${fixed(f.cpuSeconds, 1)} s (${fixed(f.cpuMsPerRecord)} ms a record), peak RSS ${f.peakRssMb} MB ` +
      `(V8 heap ${f.heapTotalMb} MB, outside it ${f.externalMb} MB), sandbox CPU ${fixed(f.sandboxCpuSeconds, 1)} s, ${f.apiRequests} API requests` +
      (f.scannedTables ? `\n    most rows read by sequential scans: ${f.scannedTables}` : ''),
  );
}

/** The medians of a size's rounds. */
function medianOf(runs: PassFigures[]): PassFigures {
  const of = (key: Exclude<keyof PassFigures, 'scannedTables'>) => median(runs.map((r) => r[key]));
  return {
    records: runs[0]!.records,
    seconds: of('seconds'),
    cpuSeconds: of('cpuSeconds'),
    cpuMsPerRecord: of('cpuMsPerRecord'),
    peakRssMb: of('peakRssMb'),
    heapTotalMb: of('heapTotalMb'),
    externalMb: of('externalMb'),
    sandboxCpuSeconds: of('sandboxCpuSeconds'),
    apiRequests: of('apiRequests'),
  };
}

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'rs-bench-scale-'));
  if (CPU_PROF_DIR) mkdirSync(CPU_PROF_DIR, { recursive: true });
  const runs: Record<Engine, Map<number, PassFigures[]>> = { embedded: new Map(), postgres: new Map() };
  try {
    for (const records of SIZES) {
      for (let round = 1; round <= ROUNDS; round++) {
        // Alternate which engine goes first, so neither always meets the same minute of the machine.
        const order = round % 2 === 1 ? ENGINES : [...ENGINES].reverse();
        for (const engine of order) {
          const f = await firstSync(engine, records, scratch, `${engine}-${records}-${round}`);
          printPass(engine, round, f);
          const list = runs[engine].get(records) ?? [];
          list.push(f);
          runs[engine].set(records, list);
        }
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  const result: Record<string, unknown> = { bench: 'scale', rounds: ROUNDS };
  const smallest = Math.min(...SIZES);
  const largest = Math.max(...SIZES);
  for (const engine of ENGINES) {
    const sizes = [...runs[engine].entries()].map(([, list]) => medianOf(list));
    console.log(`--- ${engine} state DB, first sync (medians of ${ROUNDS}) ---`);
    for (const f of sizes)
      console.log(
        `${String(f.records).padStart(9)} records: ${fixed(f.seconds, 1)} s wall (${fixed((f.seconds * 1000) / f.records)} ms a record), ` +
          `CPU ${fixed(f.cpuSeconds, 1)} s (${fixed(f.cpuMsPerRecord)} ms a record), peak RSS ${f.peakRssMb} MB`,
      );
    const small = sizes.find((f) => f.records === smallest)!;
    const large = sizes.find((f) => f.records === largest)!;
    const cpuGrowth = large.cpuMsPerRecord / small.cpuMsPerRecord;
    const wallGrowth = large.seconds / large.records / (small.seconds / small.records);
    const engineResult: Record<string, unknown> = {
      sizes,
      cpuPerRecordGrowth: cpuGrowth,
      wallPerRecordGrowth: wallGrowth,
    };
    if (largest > smallest) {
      console.log(
        `${smallest} -> ${largest} records (${largest / smallest}x): CPU per record ${fixed(cpuGrowth)}x ` +
          `(goal <= ${CPU_GROWTH_GOAL}x: ${cpuGrowth <= CPU_GROWTH_GOAL ? 'met' : 'not met'}), wall per record ${fixed(wallGrowth)}x`,
      );
    }
    if (engine === 'embedded' && largest >= 100_000) {
      const met = large.peakRssMb <= RSS_GOAL_MB;
      console.log(
        `peak RSS at ${largest} records: ${large.peakRssMb} MB (goal <= ${RSS_GOAL_MB} MB: ${met ? 'met' : 'not met'})`,
      );
      engineResult.rssGoalMet = met;
    }
    result[engine] = engineResult;
  }
  console.log(JSON.stringify(result));
}

await main();
