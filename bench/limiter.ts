/**
 * `npm run bench:limiter` (tsx bench/limiter.ts): how close the shared limiter gets to the quota.
 *
 * Starts a sandbox in this process with a small policy, runs N processes × C requests in flight on
 * one token through the Redis limiter for several windows, and prints, per algorithm, the share of
 * the quota the sandbox counted, its 429s and the margin. One line per metric, then one JSON line.
 *
 * Options: --quota 60 --window 5 --windows 6 --processes 4 --concurrency 8 --margin <ms>
 *          --algorithm both|sliding-log|token-bucket --redis redis://127.0.0.1:6379
 *          --runs 1 (runs per algorithm, each on a fresh sandbox and budget, the processes cold)
 *          --hog (a busy-loop process per core runs beside the whole bench: a loaded host)
 *
 * Lua calls per admitted request = (budget checks of `acquire` + one `observe` per response) /
 * requests admitted, over every process (each is one Lua script in Redis).
 *
 * Share = requests counted by the sandbox / (q × windows elapsed), where windows elapsed =
 * 1 + (last − first counted request) / w: the most a sliding window of w lets through in that time
 * is q per started window, so the share is at most 1.
 */
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { DEFAULT_MARGIN, marginMs } from '../src/api/rate-limit/policy.js';
import { startSandbox } from '../src/sandbox/server.js';
import { countSandboxRequests, maxInAnySpan, spawnLimiterWorkers } from '../test/support/limiter-worker.js';
import { type CpuHog, startCpuHogs } from './cpu-hog.js';
import { BENCH_WORKER_SCRIPT, type LimiterAlgorithm } from './limiter-worker.js';

const { values } = parseArgs({
  options: {
    quota: { type: 'string', default: '60' },
    window: { type: 'string', default: '5' },
    windows: { type: 'string', default: '6' },
    processes: { type: 'string', default: '4' },
    concurrency: { type: 'string', default: '8' },
    margin: { type: 'string' },
    algorithm: { type: 'string', default: 'both' },
    redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
    runs: { type: 'string', default: '1' },
    hog: { type: 'boolean', default: false },
  },
});

const quota = Number(values.quota);
const windowSeconds = Number(values.window);
const windows = Number(values.windows);
const processes = Number(values.processes);
const concurrency = Number(values.concurrency);
const runs = Number(values.runs);
const fixedMargin = values.margin === undefined ? undefined : Number(values.margin);
const margin = fixedMargin ?? marginMs({ quota, windowSeconds }, DEFAULT_MARGIN);
const algorithms: LimiterAlgorithm[] =
  values.algorithm === 'both' ? ['sliding-log', 'token-bucket'] : [values.algorithm as LimiterAlgorithm];

interface Result {
  algorithm: LimiterAlgorithm;
  counted: number;
  rateLimited: number;
  windowsElapsed: number;
  share: number;
  /**
   * From the second window on (the first is the idle budget's burst): the rate counted, over q / w.
   * Pacing (PACE_SLICES) hands a burst's slots out again over the next window instead of at once,
   * so a finite run's last window is spread, not a burst: `share` counts that, this does not.
   */
  steadyShare: number;
  theoreticalShare: number;
  maxInOneWindow: number;
  meanWaitMs: number;
  /** Lua calls (budget checks + observes) per admitted request, and the checks alone. */
  luaCallsPerAdmitted: number;
  checksPerAdmitted: number;
  /** Share of the requests whose log entry was restamped with its response time. */
  restampedShare: number;
}

async function measure(algorithm: LimiterAlgorithm, redisUrl: string, prefix: string): Promise<Result> {
  const sandbox = await startSandbox({ port: 0 }, { rateLimit: { quota, windowSeconds } });
  try {
    const server = countSandboxRequests(sandbox.deps);
    const workers = await spawnLimiterWorkers(
      processes,
      {
        redisUrl,
        prefix,
        key: `bench-${algorithm}`,
        baseUrl: sandbox.baseUrl,
        token: sandbox.accessToken,
        concurrency,
        durationMs: windows * windowSeconds * 1000,
        algorithm,
        marginMs: fixedMargin,
      },
      BENCH_WORKER_SCRIPT,
    );
    const reports = await workers.go();
    const counted = server.counted;
    const first = Math.min(...counted);
    const last = Math.max(...counted);
    const windowsElapsed = 1 + (last - first) / (windowSeconds * 1000);
    const requests = reports.flatMap((r) => r.requests);
    const sum = (pick: (stats: (typeof reports)[number]['stats']) => number | undefined) =>
      reports.reduce((total, r) => total + (pick(r.stats) ?? 0), 0);
    const admitted = Math.max(
      1,
      sum((s) => s.acquired),
    );
    const longRun = (windowSeconds * 1000) / (windowSeconds * 1000 + margin);
    return {
      algorithm,
      counted: counted.length,
      rateLimited: server.refused(),
      windowsElapsed: round(windowsElapsed),
      share: round(counted.length / (quota * windowsElapsed)),
      steadyShare: round(steadyShareOf(counted, quota, windowSeconds * 1000, margin)),
      // Token bucket with burst 1: rate (q − 1) / (w + margin).
      theoreticalShare: round(algorithm === 'sliding-log' ? longRun : (longRun * (quota - 1)) / quota),
      maxInOneWindow: maxInAnySpan(counted, windowSeconds * 1000),
      meanWaitMs: Math.round(
        requests.reduce((total, r) => total + r.waitedMs, 0) / Math.max(1, requests.length),
      ),
      luaCallsPerAdmitted: round((sum((s) => s.checks) + sum((s) => s.observeCalls)) / admitted),
      checksPerAdmitted: round(sum((s) => s.checks) / admitted),
      restampedShare: round(sum((s) => s.restamped) / Math.max(1, requests.length)),
    };
  } finally {
    await sandbox.close();
  }
}

const round = (x: number) => Math.round(x * 1000) / 1000;

async function main(): Promise<void> {
  const prefix = `bench-rl-${randomUUID().slice(0, 8)}`;
  const redis = new Redis(values.redis!);
  const results: Result[] = [];
  let hog: CpuHog | undefined;
  try {
    console.log(`policy: q=${quota} w=${windowSeconds}s`);
    console.log(`processes x concurrency: ${processes} x ${concurrency}`);
    console.log(`margin ms: ${margin}${fixedMargin === undefined ? ' (default: max(250 ms, 1% of w))' : ''}`);
    console.log(`run: ${windows} windows (${windows * windowSeconds} s) per algorithm, ${runs} run(s) each`);
    if (values.hog) hog = startCpuHogs();
    console.log(
      `cpu hog: ${hog ? `${hog.processes} busy-loop processes (cores: ${availableParallelism()})` : 'off'}`,
    );
    for (const algorithm of algorithms) {
      for (let run = 1; run <= runs; run++) {
        const result = await measure(algorithm, values.redis!, prefix);
        results.push(result);
        print(algorithm, run, result);
      }
      const mine = results.filter((r) => r.algorithm === algorithm);
      const shares = mine.map((r) => r.share);
      const steady = mine.map((r) => r.steadyShare);
      console.log(
        `${algorithm} over ${mine.length} run(s): 429 responses ${mine.reduce((n, r) => n + r.rateLimited, 0)}, share ${Math.min(...shares)}–${Math.max(...shares)}, steady share ${Math.min(...steady)}–${Math.max(...steady)}`,
      );
    }
    if (algorithms.length === 2) {
      const mean = (a: LimiterAlgorithm) => {
        const mine = results.filter((r) => r.algorithm === a);
        return mine.reduce((n, r) => n + r.share, 0) / mine.length;
      };
      console.log(
        `closest to the quota: ${mean('sliding-log') >= mean('token-bucket') ? 'sliding-log' : 'token-bucket'}`,
      );
    }
    console.log(
      JSON.stringify({
        policy: { quota, windowSeconds },
        processes,
        concurrency,
        marginMs: margin,
        windows,
        hog: hog?.processes ?? 0,
        results,
      }),
    );
  } finally {
    hog?.stop();
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}

function print(algorithm: LimiterAlgorithm, run: number, result: Result): void {
  const label = runs > 1 ? `${algorithm} run ${run}` : algorithm;
  console.log(`${label} requests counted by the sandbox: ${result.counted}`);
  console.log(`${label} 429 responses: ${result.rateLimited}`);
  console.log(`${label} windows elapsed: ${result.windowsElapsed}`);
  console.log(
    `${label} max requests in any ${windowSeconds} s window: ${result.maxInOneWindow} (quota ${quota})`,
  );
  console.log(`${label} mean wait per request ms: ${result.meanWaitMs}`);
  console.log(
    `${label} Lua calls per admitted request: ${result.luaCallsPerAdmitted} (budget checks ${result.checksPerAdmitted} + observe)`,
  );
  console.log(`${label} share of requests restamped with their response time: ${result.restampedShare}`);
  console.log(`${label} achieved share of the quota: ${result.share}`);
  console.log(`${label} steady share (from the second window on): ${result.steadyShare}`);
  console.log(`${label} long-run theoretical share: ${result.theoreticalShare}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});

/** Requests per ms from the second window on (the first one's burst left out), over q / w. */
function steadyShareOf(
  counted: readonly number[],
  quota: number,
  windowMs: number,
  marginMs: number,
): number {
  const sorted = [...counted].sort((a, b) => a - b);
  const steady = sorted.filter((t) => t >= sorted[0]! + windowMs + marginMs);
  if (steady.length < 2) return 0;
  return ((steady.length - 1) * windowMs) / ((steady.at(-1)! - steady[0]!) * quota);
}
