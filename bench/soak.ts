/**
 * `npm run bench:soak` (builds, then tsx bench/soak.ts): a worker left running, its memory over
 * time. One `sandbox` and one `worker` of the BUILT CLI (the embedded state DB, or Postgres with
 * DATABASE_URL: a schema of its own; Redis at REDIS_URL, a queue prefix of its own), a CSV source
 * scheduled every 10 s, a new file of SOAK_ROWS (50) rows dropped every SOAK_DROP_SECONDS (15),
 * half of them changed, half new. Every SOAK_SAMPLE_SECONDS (30) the worker's RSS (`/proc/<pid>`)
 * is sampled; at the end (SOAK_MINUTES, default 60) it prints each sample, the mean RSS of the first
 * and the last quarter, the growth between them, and a least-squares slope in MB per hour over the
 * second half (after warm-up): a leak keeps climbing there, a settling heap flattens. Then the
 * records the sandbox holds are checked against the rows dropped (each once).
 * Prints one line per figure, then one JSON line.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliSandbox, startCliSandbox } from './cli-sandbox.js';
import { dropSchemas } from './sync-state-db.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'receivables-sync.js');
const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const MINUTES = number('SOAK_MINUTES', 60);
const DROP_SECONDS = number('SOAK_DROP_SECONDS', 15);
const SAMPLE_SECONDS = number('SOAK_SAMPLE_SECONDS', 30);
const ROWS = number('SOAK_ROWS', 50);

const rssMb = (pid: number): number | null => {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
};

/** The CLI's sandbox, with a reader of its admin routes (`/__sandbox/...`). */
async function startSandbox(): Promise<CliSandbox & { admin: (path: string) => Promise<unknown> }> {
  const sandbox = await startCliSandbox(BIN);
  return {
    ...sandbox,
    admin: async (path) => {
      const response = await fetch(new URL(`/__sandbox${path}`, sandbox.info.baseUrl), {
        headers: { authorization: `Bearer ${sandbox.info.adminToken}` },
      });
      return response.json();
    },
  };
}

/** `n` accounts rows and invoice rows of round `round`: invoices 1..(round*ROWS/2) stay, half change. */
function drop(dropDir: string, round: number): void {
  const accounts = ['sourceId,fullName,currencyCode'];
  for (let i = 1; i <= 10; i++) accounts.push(`C-${i},Customer ${i},EUR`);
  const invoices = ['sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,paidAmount'];
  const first = Math.max(1, round * (ROWS / 2) - ROWS / 2 + 1);
  for (let i = first; i < first + ROWS; i++)
    invoices.push(
      `I-${i},C-${(i % 10) + 1},F-${i},2026-01-10,2026-02-09,120.00,20.00,${(round % 2) * 10}.00`,
    );
  for (const [name, lines] of [
    [`accounts-${round}.csv`, accounts],
    [`invoices-${round}.csv`, invoices],
  ] as const) {
    writeFileSync(join(dropDir, `${name}.part`), `${lines.join('\n')}\n`);
    renameSync(join(dropDir, `${name}.part`), join(dropDir, name));
  }
}

async function main(): Promise<void> {
  if (process.env.SOAK_BUILD !== '0') spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  const scratch = mkdtempSync(join(tmpdir(), 'rs-soak-'));
  const dropDir = join(scratch, 'drop');
  mkdirSync(dropDir);
  const schema = `bench_soak_${process.pid}`;
  const prefix = `soak-${randomBytes(4).toString('hex')}`;
  writeFileSync(
    join(scratch, 'receivables-sync.yaml'),
    `state:\n  dataDir: ./state\nqueue:\n  prefix: ${prefix}\nsources:\n  - { id: erp, type: csv, dropDir: ./drop, stableSeconds: 0, schedule: "*/10 * * * * *" }\n`,
  );
  const sandbox = await startSandbox();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...sandbox.env,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    DASHBOARD_PORT: '0',
    ...(process.env.DATABASE_URL ? { DATABASE_SCHEMA: schema } : {}),
  };
  const worker = spawn(process.execPath, [BIN, 'worker'], {
    cwd: scratch,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  worker.stderr!.on('data', (c) => (stderr = `${stderr}${c}`.slice(-4000)));
  const samples: Array<{ minute: number; rssMb: number }> = [];
  const started = Date.now();
  let round = 0;
  try {
    const end = started + MINUTES * 60_000;
    let nextDrop = started;
    // The first sample once the worker has started (before, it is a process still loading).
    let nextSample = started + SAMPLE_SECONDS * 1000;
    while (Date.now() < end) {
      if (worker.exitCode !== null) throw new Error(`the worker exited ${worker.exitCode}: ${stderr}`);
      if (Date.now() >= nextDrop) {
        drop(dropDir, ++round);
        nextDrop += DROP_SECONDS * 1000;
      }
      if (Date.now() >= nextSample) {
        const rss = rssMb(worker.pid!);
        if (rss !== null) samples.push({ minute: (Date.now() - started) / 60_000, rssMb: rss });
        nextSample += SAMPLE_SECONDS * 1000;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await new Promise((r) => setTimeout(r, 30_000));
    const stats = (await sandbox.admin('/stats')) as { accounts: number; invoices: number };
    const expectedInvoices = round * (ROWS / 2) + ROWS / 2;
    const quarter = Math.max(1, Math.floor(samples.length / 4));
    const mean = (xs: Array<{ rssMb: number }>) => xs.reduce((a, s) => a + s.rssMb, 0) / xs.length;
    const firstQ = mean(samples.slice(0, quarter));
    const lastQ = mean(samples.slice(-quarter));
    const half = samples.slice(Math.floor(samples.length / 2));
    const mx = half.reduce((a, s) => a + s.minute, 0) / half.length;
    const my = mean(half);
    const slope =
      half.reduce((a, s) => a + (s.minute - mx) * (s.rssMb - my), 0) /
      Math.max(
        1e-9,
        half.reduce((a, s) => a + (s.minute - mx) ** 2, 0),
      );
    for (const s of samples) console.log(`${s.minute.toFixed(1)} min  ${s.rssMb} MB`);
    console.log(
      `${round} files of ${ROWS} invoice rows dropped in ${MINUTES} min; the sandbox holds ${stats.invoices} invoices (expected ${expectedInvoices}), ${stats.accounts} accounts (10)`,
    );
    console.log(
      `worker RSS: first quarter ${firstQ.toFixed(0)} MB, last quarter ${lastQ.toFixed(0)} MB (${(lastQ - firstQ).toFixed(0)} MB); second half slope ${(slope * 60).toFixed(1)} MB/hour`,
    );
    console.log(
      JSON.stringify({
        bench: 'soak',
        minutes: MINUTES,
        files: round,
        invoices: stats.invoices,
        expectedInvoices,
        rss: {
          firstQuarterMb: Math.round(firstQ),
          lastQuarterMb: Math.round(lastQ),
          slopeMbPerHour: Number((slope * 60).toFixed(1)),
        },
        samples,
        ok: stats.invoices === expectedInvoices && stats.accounts === 10,
      }),
    );
  } finally {
    worker.kill('SIGTERM');
    await once(worker, 'exit').catch(() => undefined);
    sandbox.child.kill('SIGTERM');
    if (process.env.DATABASE_URL) await dropSchemas(process.env.DATABASE_URL, [schema]);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await main();
