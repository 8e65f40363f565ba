/**
 * `npm run bench:fleet` (tsx bench/fleet.ts): many tokens and sources in 3 worker processes.
 *
 * One in-process sandbox with a scaled-down policy (q = 60 per w = 10 s per access token), 4 tokens
 * minted by its admin route (the default connection and 3 `connections:` entries), 20 CSV sources
 * (bench/fleet-scenario.ts: token 1 a 5,000-row backlog + 4 small sources, tokens 2-4 two busy
 * sources of 1,500 rows + 3 small sources each), 3 `worker` processes of the BUILT CLI sharing
 * Redis (a queue prefix of their own) and one Postgres state DB (a schema of its own). Small sources
 * get a 20-row file at the start and a new one every FLEET_DROP_SECONDS during the window. Over the
 * measured window (from FLEET_WARMUP_SECONDS after the start, FLEET_WINDOW_SECONDS long) it prints:
 * - per token: requests the sandbox counted and its share of the policy (window / w × q), 429s;
 *   the aggregate share Σ counted ÷ Σ allowed (goal ≥ 0.95, 0 × 429); when the budgets are spent
 *   in bursts, whose count in the window depends on where its ends fall, also the share per burst
 *   cycle (the long-run share);
 * - Jain's index between the two equally weighted busy sources of tokens 2-4 (requests counted in
 *   the window for each: one create per row), per token and the minimum (goal ≥ 0.95);
 * - each small file dropped in the window: its pass's start (runs.started_at) → its first request at
 *   the sandbox, its drop → first request, and the pass's duration: max and median.
 * Then the workers get SIGTERM, and the schema, the Redis keys and the temp folder are removed.
 *
 * Runs `npm run build` first (FLEET_BUILD=0 skips it). Environment: FLEET_WARMUP_SECONDS (20),
 * FLEET_WINDOW_SECONDS (120), FLEET_DROP_SECONDS (20), FLEET_GRACE_SECONDS (30: after the window,
 * how long to wait for the small files still syncing), FLEET_WORKERS (3), FLEET_JOB_CONCURRENCY
 * (8: `queue.concurrency`, enough for every source to run at once), FLEET_BACKLOG_ROWS (5000),
 * FLEET_BUSY_ROWS (1500), FLEET_SMALL_ROWS (20), FLEET_QUOTA (60) and FLEET_POLICY_WINDOW_SECONDS
 * (10): the sandbox's policy, TEST_DATABASE_URL, REDIS_URL.
 * Prints one line per figure, then one JSON line.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pg from 'pg';
import { budgetKeyOf } from '../src/api/auth/static-token-provider.js';
import { buildSandboxApp, createSandboxDeps } from '../src/sandbox/app.js';
import { sandboxOptions } from '../src/sandbox/options.js';
import { seedStore } from '../src/sandbox/store.js';
import { deleteKeys } from '../test/support/worker-process.js';
import { recordResponses, type Window } from './fleet-figures.js';
import { report, type SmallFileRow, type WorkerLog } from './fleet-report.js';
import { dropAccounts, fleetConfigYaml, fleetSources, TOKENS, tokenEnvOf } from './fleet-scenario.js';

const envNumber = (name: string, fallback: number) => {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
};
const WARMUP_S = envNumber('FLEET_WARMUP_SECONDS', 20);
const WINDOW_S = envNumber('FLEET_WINDOW_SECONDS', 120);
const DROP_S = envNumber('FLEET_DROP_SECONDS', 20);
const GRACE_S = envNumber('FLEET_GRACE_SECONDS', 30);
const WORKERS = envNumber('FLEET_WORKERS', 3);
const JOB_CONCURRENCY = envNumber('FLEET_JOB_CONCURRENCY', 8);
const BACKLOG_ROWS = envNumber('FLEET_BACKLOG_ROWS', 5000);
const BUSY_ROWS = envNumber('FLEET_BUSY_ROWS', 1500);
const SMALL_ROWS = envNumber('FLEET_SMALL_ROWS', 20);
const POLICY = {
  quota: envNumber('FLEET_QUOTA', 60),
  windowSeconds: envNumber('FLEET_POLICY_WINDOW_SECONDS', 10),
};
const SCHEDULE = '*/3 * * * * *';
const DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The rate limiter's Redis prefix (its default: the worker does not set it from `queue.prefix`). */
const LIMITER_PREFIX = 'receivables-sync';
const REPO_ROOT = join(import.meta.dirname, '..');
const MAIN = join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js');

/** A worker process and what it logged (LOG_LEVEL=warn: warnings and errors only). */
interface FleetWorker extends WorkerLog {
  child: ChildProcess;
  exited: Promise<unknown>;
  /** The end of its stderr, shown if it dies. */
  tail: string;
}

function spawnWorker(configFile: string, env: NodeJS.ProcessEnv): FleetWorker {
  const child = spawn(process.execPath, [MAIN, '--config', configFile, 'worker'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const worker: FleetWorker = {
    child,
    exited: once(child, 'exit'),
    warnings: 0,
    errors: 0,
    messages: new Map(),
    tail: '',
  };
  createInterface({ input: child.stderr! }).on('line', (text) => {
    worker.tail = `${worker.tail}\n${text}`.slice(-3000);
    let line: { level?: number; msg?: string };
    try {
      line = JSON.parse(text) as typeof line;
    } catch {
      line = { level: 50, msg: text };
    }
    if ((line.level ?? 0) >= 50) worker.errors++;
    else if ((line.level ?? 0) >= 40) worker.warnings++;
    const msg = `${line.level}: ${line.msg}`;
    worker.messages.set(msg, (worker.messages.get(msg) ?? 0) + 1);
  });
  return worker;
}

/** `node dist/src/cli/main.js ...` to its end. */
function runCli(args: readonly string[], env: NodeJS.ProcessEnv): { code: number | null; stderr: string } {
  const run = spawnSync(process.execPath, [MAIN, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return { code: run.status, stderr: run.stderr };
}

function build(): void {
  if (process.env.FLEET_BUILD === '0') return;
  const run = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (run.status !== 0) {
    // tsc emits despite type errors: the run goes on with what it emitted, and says so.
    console.error(`warning: npm run build reported errors (the bench runs what tsc emitted):\n${run.stdout}`);
  }
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build`);
}

async function main(): Promise<void> {
  build();
  const sources = fleetSources();
  const dir = mkdtempSync(join(tmpdir(), 'rs-bench-fleet-'));
  const suffix = randomBytes(4).toString('hex');
  const schema = `bench_fleet_${suffix}`;
  const prefix = `bench-fleet-${suffix}`;
  const spoolDir = join(dir, 'spool');
  const dropDirOf = (source: string) => join(dir, 'drop', source);
  mkdirSync(spoolDir, { recursive: true });
  for (const source of sources) mkdirSync(dropDirOf(source.id), { recursive: true });

  // The sandbox as startSandbox builds it, with the recording hook added before listen.
  const options = sandboxOptions({ rateLimit: POLICY });
  const deps = createSandboxDeps(options);
  const seeded = seedStore(deps.store, options.organizationId);
  const app = buildSandboxApp(deps);
  const tokens = new Map<string, number>();
  const served = recordResponses(app, (token) => tokens.get(token));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const admin = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}/__sandbox${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${deps.options.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST /__sandbox${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as T;
  };
  const tokenOf = new Map<number, string>();
  for (const token of TOKENS) {
    const { accessToken } = await admin<{ accessToken: string }>('/tokens', { userId: seeded.user.id });
    tokens.set(accessToken, token);
    tokenOf.set(token, accessToken);
  }
  const second = await admin<{ id: string }>('/organizations', {
    name: 'Fleet Second Org',
    memberUserIds: [seeded.user.id],
  });

  const configFile = join(dir, 'fleet.yaml');
  writeFileSync(
    configFile,
    fleetConfigYaml(sources, {
      dataDir: join(dir, 'data'),
      dropDirOf,
      baseUrl,
      organizationId: seeded.organization.id,
      secondOrganizationId: second.id,
      prefix,
      schedule: SCHEDULE,
      jobConcurrency: JOB_CONCURRENCY,
      apiConcurrency: 8,
    }),
  );
  const env: NodeJS.ProcessEnv = {
    RECEIVABLES_BASE_URL: baseUrl,
    RECEIVABLES_ORGANIZATION_ID: seeded.organization.id,
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    DASHBOARD_PORT: '0',
  };
  for (const token of TOKENS) env[tokenEnvOf(token)] = tokenOf.get(token);

  const database = new pg.Client({ connectionString: DATABASE_URL });
  await database.connect();
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const workers: FleetWorker[] = [];
  const killAll = () => {
    for (const w of workers)
      if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const drops = new Map<string, number>();
  try {
    const migrated = runCli(['--config', configFile, 'migrate'], env);
    if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
    for (const source of sources) {
      const rows = source.role === 'backlog' ? BACKLOG_ROWS : source.role === 'busy' ? BUSY_ROWS : SMALL_ROWS;
      dropAccounts(dropDirOf(source.id), spoolDir, source.id, 0, rows);
      drops.set(`${source.id}.f0`, Date.now());
    }
    const started = Date.now();
    for (let n = 0; n < WORKERS; n++) workers.push(spawnWorker(configFile, env));
    const window: Window = { from: started + WARMUP_S * 1000, to: started + (WARMUP_S + WINDOW_S) * 1000 };
    console.log(`policy: q=${POLICY.quota} w=${POLICY.windowSeconds}s per token, ${TOKENS.length} tokens`);
    console.log(
      `sources: ${sources.length} (${sources.filter((s) => s.role === 'small').length} small of ${SMALL_ROWS} rows, a new file every ${DROP_S} s), ${WORKERS} workers x ${JOB_CONCURRENCY} jobs, schedule "${SCHEDULE}"`,
    );
    console.log(`window: from ${WARMUP_S} s after the start, ${WINDOW_S} s long`);

    // Small sources' files in the window, staggered over the drop period (one every DROP_S each).
    const small = sources.filter((s) => s.role === 'small');
    const schedule: Array<{ at: number; source: string; file: number }> = [];
    small.forEach((source, j) => {
      for (let k = 1; ; k++) {
        const at = window.from + (j * DROP_S * 1000) / small.length + (k - 1) * DROP_S * 1000;
        if (at >= window.to) break;
        schedule.push({ at, source: source.id, file: k });
      }
    });
    schedule.sort((a, b) => a.at - b.at);
    const recordMapCounts = async () => {
      const { rows } = await database.query<{ source_id: string; n: number }>(
        `select source_id, count(*)::int as n from "${schema}".record_map group by source_id`,
      );
      return new Map(rows.map((r) => [r.source_id, r.n]));
    };
    let atStart: Map<string, number> | undefined;
    for (const drop of schedule) {
      await waitUntil(drop.at, workers);
      atStart ??= await recordMapCounts();
      dropAccounts(dropDirOf(drop.source), spoolDir, drop.source, drop.file, SMALL_ROWS);
      drops.set(`${drop.source}.f${drop.file}`, Date.now());
    }
    atStart ??= await recordMapCounts();
    await waitUntil(window.to, workers);
    const atEnd = await recordMapCounts();
    // Small files still syncing get a grace period: their waits are samples under load too.
    const graceEnd = Date.now() + GRACE_S * 1000;
    let files = await smallFiles(database, schema);
    while (Date.now() < graceEnd && !allSynced(files, drops)) {
      await sleep(1000);
      files = await smallFiles(database, schema);
    }
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.race([Promise.all(workers.map((w) => w.exited)), sleep(30_000)]);
    files = await smallFiles(database, schema);
    const settings = {
      policy: POLICY,
      workers: WORKERS,
      jobConcurrency: JOB_CONCURRENCY,
      windowSeconds: WINDOW_S,
      warmupSeconds: WARMUP_S,
      smallRows: SMALL_ROWS,
    };
    report({ served, window, sources, files, drops, atStart, atEnd, workers, settings });
  } finally {
    killAll();
    await database.query(`drop schema if exists "${schema}" cascade`).catch(() => undefined);
    await database.end();
    const patterns = [
      `${prefix}:*`,
      ...[...tokens.keys()].map((t) => `${LIMITER_PREFIX}:rl:${budgetKeyOf(t)}:*`),
    ];
    for (const pattern of patterns) await deleteKeys(REDIS_URL, pattern).catch(() => undefined);
    redis.disconnect();
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Sleeps until `at`, failing if a worker died meanwhile. */
async function waitUntil(at: number, workers: readonly FleetWorker[]): Promise<void> {
  while (Date.now() < at) {
    const dead = workers.find((w) => w.child.exitCode !== null || w.child.signalCode !== null);
    if (dead)
      throw new Error(`a worker exited (${dead.child.exitCode ?? dead.child.signalCode}):${dead.tail}`);
    await sleep(Math.max(1, Math.min(500, at - Date.now())));
  }
}

async function smallFiles(database: pg.Client, schema: string): Promise<SmallFileRow[]> {
  const { rows } = await database.query<SmallFileRow>(
    `select r.source_id, split_part(r.source_key, '.', 2) as file, count(*)::int as rows,
            min(r.synced_at) as first_synced, max(r.synced_at) as last_synced,
            min(u.started_at) as started_at, max(u.finished_at) as finished_at,
            count(distinct r.last_run_id)::int as runs
       from "${schema}".record_map r left join "${schema}".runs u on u.id = r.last_run_id
      where r.source_id like '%-small-%'
      group by 1, 2`,
  );
  return rows;
}

const allSynced = (files: readonly SmallFileRow[], drops: Map<string, number>) => {
  const smallDrops = [...drops.keys()].filter((key) => key.includes('-small-'));
  const done = new Set(files.filter((f) => f.rows >= SMALL_ROWS).map((f) => `${f.source_id}.${f.file}`));
  return smallDrops.every((key) => done.has(key));
};

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
