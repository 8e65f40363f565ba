/**
 * A child process for the multi-process rate-limiter tests and `bench/limiter.ts`: it runs
 * `concurrency` requests in flight (p-queue) of `GET /api/public/v1/organizations` with one token,
 * each admitted by the Redis limiter (or, with `store: 'memory'`, the in-process one) and observed,
 * until `durationMs` after the parent says "go" (or `maxRequests` were sent).
 *
 * Run: `node --import tsx test/support/limiter-worker.ts '<WorkerArgs JSON>'`. It prints
 * `{"ready":true}` once connected, waits for a `go` line on stdin, then prints one `WorkerReport`
 * JSON line and exits. The parent side is `spawnLimiterWorkers`. A worker script of its own (the
 * bench's token bucket, bench/limiter-worker.ts) calls `runAsWorker` with its `LimiterFactory`.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import PQueue from 'p-queue';
import { parseRateInfo } from '../../src/api/rate-limit/headers.js';
import { RedisRateLimiter } from '../../src/api/rate-limit/redis-limiter.js';
import { timerSleep } from '../../src/api/rate-limit/sleep.js';
import { SlidingLogRateLimiter } from '../../src/api/rate-limit/sliding-log.js';
import type { MeteredRateLimiter, RateLimiterStats, Sleep } from '../../src/api/rate-limit/types.js';
import { systemClock } from '../../src/domain/clock.js';
import type { SandboxDeps } from '../../src/sandbox/context.js';

export interface WorkerArgs {
  /** `redis` (default): the shared limiter at `redisUrl`; `memory`: this process's own. */
  store?: 'redis' | 'memory';
  redisUrl: string;
  prefix: string;
  /** The budget key (a stand-in for `TokenProvider.budgetKey(token)`). */
  key: string;
  baseUrl: string;
  token: string;
  concurrency: number;
  durationMs: number;
  marginMs?: number;
  /** Pause (ms) a slot takes after each response, to send at a steady pace instead of flat out. */
  intervalMs?: number;
  /** Stop after sending this many requests (default: until `durationMs`). */
  maxRequests?: number;
  /**
   * A token the first request is sent with (e.g. one the server no longer knows: a 401, as a
   * restarted process meets with the token it had stored); the others use `token`.
   */
  firstToken?: string;
}

export interface WorkerRequest {
  /** When the limiter admitted the request (just before `fetch`): `Date.now()`, or the run's clock. */
  sentAt: number;
  doneAt: number;
  status: number;
  waitedMs: number;
}

export interface WorkerReport {
  pid: number;
  requests: WorkerRequest[];
  stats: RateLimiterStats;
}

const API_PATH = '/api/public/v1/organizations';

/** The limiter of one worker: over `redis` (undefined for `store: 'memory'`), real time. */
export type LimiterFactory<A extends WorkerArgs = WorkerArgs> = (
  args: A,
  redis: Redis | undefined,
  common: { clock: typeof systemClock; sleep: typeof timerSleep; marginMs: number | undefined },
) => MeteredRateLimiter;

/** The production limiters: `RedisRateLimiter` (on the Redis clock), else the in-process sliding log. */
export const productionLimiter: LimiterFactory = (args, redis, common) =>
  redis ? new RedisRateLimiter({ ...common, redis, prefix: args.prefix }) : new SlidingLogRateLimiter(common);

async function runWorker<A extends WorkerArgs>(args: A, limiterOf: LimiterFactory<A>): Promise<WorkerReport> {
  const redis =
    args.store === 'memory'
      ? undefined
      : new Redis(args.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis?.connect();
  const limiter = limiterOf(args, redis, { clock: systemClock, sleep: timerSleep, marginMs: args.marginMs });
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  await waitForGo();
  const requests = await sendRequests(args, limiter);
  await limiter.close();
  await redis?.quit();
  return { pid: process.pid, requests, stats: limiter.stats() };
}

/** How a worker tells and waits the time, and sends its requests. */
export interface WorkerTime {
  now(): number;
  sleep: Sleep;
  timeout(ms: number): AbortSignal;
  fetch: typeof fetch;
}

const REAL_TIME: WorkerTime = {
  now: () => Date.now(),
  sleep: timerSleep,
  timeout: (ms) => AbortSignal.timeout(ms),
  fetch: (input, init) => fetch(input, init),
};

/**
 * A worker's run, admitted by `limiter`: `concurrency` requests in flight until `durationMs` from
 * now (or `maxRequests` sent). In a worker process on real time; a test of the in-process limiter
 * may run it in its own process on a virtual clock (test/support/virtual-time.ts).
 */
export async function sendRequests(
  args: WorkerArgs,
  limiter: MeteredRateLimiter,
  time: WorkerTime = REAL_TIME,
): Promise<WorkerRequest[]> {
  const deadline = time.now() + args.durationMs;
  const stop = time.timeout(args.durationMs);
  const requests: WorkerRequest[] = [];
  const queue = new PQueue({ concurrency: args.concurrency });
  let sent = 0;
  const more = () => time.now() < deadline && (args.maxRequests === undefined || sent < args.maxRequests);
  const one = async () => {
    let waitedMs: number;
    try {
      waitedMs = await limiter.acquire(args.key, stop);
    } catch {
      return; // the run is over while waiting: nothing was sent
    }
    if (!more()) return; // admitted but not needed: the entry only costs our own budget
    const token = sent++ === 0 && args.firstToken !== undefined ? args.firstToken : args.token;
    const sentAt = time.now();
    const response = await time.fetch(new URL(API_PATH, args.baseUrl), {
      headers: { authorization: `Bearer ${token}` },
    });
    await response.arrayBuffer();
    const doneAt = time.now();
    await limiter.observe(args.key, {
      ...parseRateInfo(response.status, response.headers, { now: new Date(doneAt) }),
      elapsedMs: doneAt - sentAt,
    });
    requests.push({ sentAt, doneAt, status: response.status, waitedMs });
    if (args.intervalMs) await time.sleep(args.intervalMs);
  };
  // Keeps `concurrency` tasks in the queue until the deadline.
  const feed = async () => {
    while (more()) await queue.add(one);
  };
  await Promise.all(Array.from({ length: args.concurrency }, feed));
  await queue.onIdle();
  return requests;
}

function waitForGo(): Promise<void> {
  return new Promise((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.on('line', (line) => {
      if (line.trim() === 'go') {
        lines.close();
        resolve();
      }
    });
  });
}

// ---- parent side ----

export interface RunningWorkers {
  /** Starts every worker at once; resolves with their reports when all have exited. */
  go(): Promise<WorkerReport[]>;
  /** Kills the workers still running (cleanup after a failure). */
  kill(): void;
}

/**
 * Spawns `count` workers and resolves once all of them are connected and waiting for "go".
 * `script`: a worker script of its own (one that calls `runAsWorker`), default this one.
 */
export async function spawnLimiterWorkers<A extends WorkerArgs>(
  count: number,
  args: A,
  script = fileURLToPath(import.meta.url),
): Promise<RunningWorkers> {
  const children: ChildProcessWithoutNullStreams[] = [];
  const reports: Promise<WorkerReport>[] = [];
  const ready: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(args)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const lines = createInterface({ input: child.stdout });
    let markReady!: () => void;
    ready.push(new Promise<void>((resolve) => (markReady = resolve)));
    reports.push(
      new Promise<WorkerReport>((resolve, reject) => {
        let report: WorkerReport | undefined;
        lines.on('line', (line) => {
          const message = JSON.parse(line);
          if (message.ready) markReady();
          else report = message as WorkerReport;
        });
        child.on('exit', (code) =>
          report && code === 0 ? resolve(report) : reject(new Error(`worker exited ${code}: ${stderr}`)),
        );
      }),
    );
    // A worker that dies before "ready" must fail the start, not hang it.
    ready[i] = Promise.race([ready[i]!, reports[i]!.then(() => undefined)]);
  }
  await Promise.all(ready);
  return {
    go: () => {
      for (const child of children) child.stdin.write('go\n');
      return Promise.all(reports);
    },
    kill: () => {
      for (const child of children) if (child.exitCode === null) child.kill();
    },
  };
}

/** Records the time (ms) of every request the sandbox's API limiter counted, and the refusals. */
export function countSandboxRequests(deps: SandboxDeps): { counted: number[]; refused: () => number } {
  const counted: number[] = [];
  let refused = 0;
  const limiter = deps.apiLimiter;
  const take = limiter.take.bind(limiter);
  limiter.take = (key, nowMs) => {
    const decision = take(key, nowMs);
    if (decision.allowed) counted.push(nowMs);
    else refused++;
    return decision;
  };
  return { counted, refused: () => refused };
}

/** Largest number of `times` in any half-open interval of `spanMs`. */
export function maxInAnySpan(times: readonly number[], spanMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while (sorted[to]! - sorted[from]! >= spanMs) from++;
    max = Math.max(max, to - from + 1);
  }
  return max;
}

/** The body of a worker script: runs with the `WorkerArgs` of its command line, prints the report, exits. */
export function runAsWorker<A extends WorkerArgs>(limiterOf: LimiterFactory<A>): void {
  runWorker(JSON.parse(process.argv[2]!) as A, limiterOf).then(
    (report) => {
      process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
    },
    (error) => {
      process.stderr.write(`${error?.stack ?? error}\n`);
      process.exit(1);
    },
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) runAsWorker(productionLimiter);
