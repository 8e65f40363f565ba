/**
 * `npm run bench:cli` (builds, then tsx bench/cli-pass.ts): what a user's `sync --once` costs, in
 * the BUILT CLI's own processes (no tsx, no bench code in them), against the CLI's `sandbox` (a
 * process of its own, its quota raised so the rate limit is not what is measured).
 *
 * 500 accounts + 10,000 invoices (`--accounts`, `--invoices`) in a drop folder: a first sync, then
 * `--rounds` (default 3) unchanged re-runs (the same rows with another `updatedAt`, which the
 * fingerprint leaves out: a new file, no write). For each process: wall time, CPU time and peak RSS
 * (VmHWM, written at exit by bench/cli-usage.cjs, preloaded through NODE_OPTIONS). On the embedded
 * state DB, then, with DATABASE_URL set, on Postgres (a schema of its own, dropped after).
 * `--v8-default-heap` runs each first sync once more with V8's own heap growth, old and young
 * generations (`--heap-growing-percent=0 --semi-space-growth-factor=2`), instead of the CLI's
 * (src/cli/heap-growth.ts), to compare.
 * Prints one line per figure, then one JSON line.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCliSandbox } from './cli-sandbox.js';
import { dropSchemas, median } from './sync-state-db.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'receivables-sync.js');
const USAGE_PRELOAD = join(import.meta.dirname, 'cli-usage.cjs');

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ACCOUNTS = arg('accounts', 500);
const INVOICES = arg('invoices', 10_000);
const ROUNDS = arg('rounds', 3);
const COMPARE_HEAP = process.argv.includes('--v8-default-heap');
/** The embedded state DB's goal for a pass of 10,000 records (docs/performance.md). */
const RSS_GOAL_MB = 250;

interface ProcessFigures {
  seconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  apiRequests: number;
  created: number;
  updated: number;
}

interface KindFigures {
  records: number;
  firstSync: ProcessFigures;
  firstSyncV8DefaultHeap?: ProcessFigures;
  rerun: ProcessFigures;
}

const ACCOUNT_HEADER = 'sourceId,fullName,currencyCode,billingAddress.city,updatedAt';
const INVOICE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,paidAmount,updatedAt';

/** The bench's rows under `prefix` (a first sync of each prefix creates them all), stamped `minute`. */
function dropFiles(dropDir: string, prefix: string, minute: number): void {
  const stamp = `2026-01-10T09:${String(minute).padStart(2, '0')}:00Z`;
  const accounts = Array.from(
    { length: ACCOUNTS },
    (_, i) => `${prefix}C-${i + 1},Customer ${i + 1},EUR,Nantes,${stamp}`,
  );
  const invoices = Array.from({ length: INVOICES }, (_, i) => {
    const paid = i % 100 === 0 ? '10.00' : '';
    return `${prefix}I-${i + 1},${prefix}C-${(i % ACCOUNTS) + 1},F-${i + 1},2026-01-10,2026-02-09,120.00,20.00,${paid},${stamp}`;
  });
  writeFileSync(join(dropDir, 'accounts.csv'), `${ACCOUNT_HEADER}\n${accounts.join('\n')}\n`);
  writeFileSync(join(dropDir, 'invoices.csv'), `${INVOICE_HEADER}\n${invoices.join('\n')}\n`);
}

const count = (text: string, pattern: RegExp) =>
  [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0);

/** One CLI process to its end; its figures, from its summary and the preload's usage file. */
async function runCli(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  nodeFlags: string[] = [],
): Promise<ProcessFigures> {
  const usageFile = join(cwd, 'usage.json');
  rmSync(usageFile, { force: true });
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, BIN, ...args], {
    cwd,
    env: { ...env, NODE_OPTIONS: `--require ${USAGE_PRELOAD}`, BENCH_USAGE_FILE: usageFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const [code] = (await once(child, 'close')) as [number | null];
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args.join(' ')} ended with ${code}:\n${stdout}\n${stderr.slice(-2000)}`);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { peakRssMb: number; cpuMs: number };
  return {
    seconds,
    cpuSeconds: usage.cpuMs / 1000,
    peakRssMb: usage.peakRssMb,
    apiRequests: count(stdout, /API requests (\d+)/g),
    created: count(stdout, /created (\d+)/g),
    updated: count(stdout, /updated (\d+)/g),
  };
}

function medianOf(runs: ProcessFigures[]): ProcessFigures {
  const of = (key: keyof ProcessFigures) => median(runs.map((r) => r[key]));
  return {
    seconds: of('seconds'),
    cpuSeconds: of('cpuSeconds'),
    peakRssMb: of('peakRssMb'),
    apiRequests: Math.max(...runs.map((r) => r.apiRequests)),
    created: Math.max(...runs.map((r) => r.created)),
    updated: Math.max(...runs.map((r) => r.updated)),
  };
}

async function measureKind(
  kind: 'embedded' | 'postgres',
  scratch: string,
  base: NodeJS.ProcessEnv,
): Promise<KindFigures> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...base };
  const schema = `bench_cli_${process.pid}`;
  if (kind === 'postgres') Object.assign(env, { DATABASE_SCHEMA: schema });
  else delete env.DATABASE_URL;
  const firstSync = async (prefix: string, nodeFlags: string[] = []) => {
    const cwd = join(scratch, `${kind}-${prefix}`);
    mkdirSync(join(cwd, 'drop'), { recursive: true });
    writeFileSync(
      join(cwd, 'receivables-sync.yaml'),
      'sources:\n  - id: erp\n    type: csv\n    dropDir: ./drop\n    stableSeconds: 0\nstate:\n  dataDir: ./state\n',
    );
    dropFiles(join(cwd, 'drop'), prefix, 0);
    const figures = await runCli(['sync', '--once'], cwd, env, nodeFlags);
    if (figures.created !== ACCOUNTS + INVOICES)
      throw new Error(`${kind}: the first sync created ${figures.created} records`);
    return { cwd, figures };
  };
  try {
    const first = await firstSync(`${kind[0]}1`);
    const reruns: ProcessFigures[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      dropFiles(join(first.cwd, 'drop'), `${kind[0]}1`, round);
      const figures = await runCli(['sync', '--once'], first.cwd, env);
      if (figures.apiRequests !== 0 || figures.created + figures.updated !== 0)
        throw new Error(`${kind}: an unchanged re-run made ${figures.apiRequests} API requests`);
      reruns.push(figures);
    }
    const result: KindFigures = {
      records: ACCOUNTS + INVOICES,
      firstSync: first.figures,
      rerun: medianOf(reruns),
    };
    if (COMPARE_HEAP) {
      if (kind === 'postgres') {
        // A second first sync in the same schema would find the first's records: a schema of its own.
        env.DATABASE_SCHEMA = `${schema}_v8`;
      }
      result.firstSyncV8DefaultHeap = (
        await firstSync(`${kind[0]}2`, ['--heap-growing-percent=0', '--semi-space-growth-factor=2'])
      ).figures;
    }
    return result;
  } finally {
    if (kind === 'postgres') await dropSchemas(env.DATABASE_URL!, [schema, `${schema}_v8`]);
  }
}

const line = (f: ProcessFigures) =>
  `${f.seconds.toFixed(2)} s, CPU ${f.cpuSeconds.toFixed(2)} s, peak RSS ${f.peakRssMb} MB`;

async function main(): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), 'rs-bench-cli-'));
  const sandbox = await startCliSandbox(BIN);
  try {
    const kinds: Array<'embedded' | 'postgres'> = process.env.DATABASE_URL
      ? ['embedded', 'postgres']
      : ['embedded'];
    const figures: Partial<Record<'embedded' | 'postgres', KindFigures>> = {};
    for (const kind of kinds) {
      const f = await measureKind(kind, scratch, sandbox.env);
      figures[kind] = f;
      console.log(`--- ${kind} state DB, the built CLI's sync --once, ${f.records} records ---`);
      console.log(
        `first sync                          ${line(f.firstSync)}, ${f.firstSync.apiRequests} API requests`,
      );
      if (f.firstSyncV8DefaultHeap)
        console.log(`first sync, V8's own heap growth    ${line(f.firstSyncV8DefaultHeap)}`);
      console.log(`unchanged re-run (median of ${ROUNDS})       ${line(f.rerun)}, 0 API requests, 0 writes`);
    }
    if (figures.embedded && figures.postgres) {
      const ratio = (key: 'seconds' | 'peakRssMb') =>
        (figures.embedded!.rerun[key] / figures.postgres!.rerun[key]).toFixed(2);
      console.log(
        `embedded ÷ Postgres, unchanged re-run: whole process ${ratio('seconds')}×, peak RSS ${ratio('peakRssMb')}×`,
      );
    }
    const embedded = figures.embedded!;
    const verdict = (mb: number) => `${mb} MB (${mb <= RSS_GOAL_MB ? 'met' : 'not met'})`;
    console.log(
      `goal: peak RSS <= ${RSS_GOAL_MB} MB on the embedded state DB (docs/performance.md, measured for 10,500 records; ${embedded.records} here): ` +
        `unchanged re-run ${verdict(embedded.rerun.peakRssMb)}, first sync ${verdict(embedded.firstSync.peakRssMb)}`,
    );
    console.log(JSON.stringify({ bench: 'cli-pass', ...figures }));
  } finally {
    sandbox.child.kill('SIGTERM');
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
