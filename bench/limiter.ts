/**
 * `npm run bench:limiter` (tsx bench/limiter.ts): how close the shared limiter gets to the quota.
 *
 * Starts a sandbox in this process with a small policy, runs N processes × C requests in flight on
 * one token through the Redis limiter for several windows, and prints, per algorithm, the share of
 * the quota the sandbox counted, its 429s and the margin. One line per metric, then one JSON line.
 *
 * Options: --quota 60 --window 5 --windows 6 --processes 4 --concurrency 8 --margin <ms>
 *          --algorithm both|sliding-log|token-bucket --redis redis://127.0.0.1:6379
 *
 * Share = requests counted by the sandbox / (q × windows elapsed), where windows elapsed =
 * 1 + (last − first counted request) / w: the most a sliding window of w lets through in that time
 * is q per started window, so the share is at most 1.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { DEFAULT_MARGIN, marginMs } from '../src/api/rate-limit/policy.js';
import type { LimiterAlgorithm } from '../src/api/rate-limit/redis-limiter.js';
import { startSandbox } from '../src/sandbox/server.js';
import { countSandboxRequests, maxInAnySpan, spawnLimiterWorkers } from '../test/support/limiter-worker.js';

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
  },
});

const quota = Number(values.quota);
const windowSeconds = Number(values.window);
const windows = Number(values.windows);
const processes = Number(values.processes);
const concurrency = Number(values.concurrency);
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
  theoreticalShare: number;
  maxInOneWindow: number;
  meanWaitMs: number;
}

async function measure(algorithm: LimiterAlgorithm, redisUrl: string, prefix: string): Promise<Result> {
  const sandbox = await startSandbox({ port: 0 }, { rateLimit: { quota, windowSeconds } });
  try {
    const server = countSandboxRequests(sandbox.deps);
    const workers = await spawnLimiterWorkers(processes, {
      redisUrl,
      prefix,
      key: `bench-${algorithm}`,
      baseUrl: sandbox.baseUrl,
      token: sandbox.accessToken,
      concurrency,
      durationMs: windows * windowSeconds * 1000,
      algorithm,
      marginMs: fixedMargin,
    });
    const reports = await workers.go();
    const counted = server.counted;
    const first = Math.min(...counted);
    const last = Math.max(...counted);
    const windowsElapsed = 1 + (last - first) / (windowSeconds * 1000);
    const requests = reports.flatMap((r) => r.requests);
    const longRun = (windowSeconds * 1000) / (windowSeconds * 1000 + margin);
    return {
      algorithm,
      counted: counted.length,
      rateLimited: server.refused(),
      windowsElapsed: round(windowsElapsed),
      share: round(counted.length / (quota * windowsElapsed)),
      // Token bucket with burst 1: rate (q − 1) / (w + margin).
      theoreticalShare: round(algorithm === 'sliding-log' ? longRun : (longRun * (quota - 1)) / quota),
      maxInOneWindow: maxInAnySpan(counted, windowSeconds * 1000),
      meanWaitMs: Math.round(requests.reduce((sum, r) => sum + r.waitedMs, 0) / Math.max(1, requests.length)),
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
  try {
    console.log(`policy: q=${quota} w=${windowSeconds}s`);
    console.log(`processes x concurrency: ${processes} x ${concurrency}`);
    console.log(`margin ms: ${margin}${fixedMargin === undefined ? ' (default: max(250 ms, 1% of w))' : ''}`);
    console.log(`run: ${windows} windows (${windows * windowSeconds} s) per algorithm`);
    for (const algorithm of algorithms) {
      const result = await measure(algorithm, values.redis!, prefix);
      results.push(result);
      console.log(`${algorithm} requests counted by the sandbox: ${result.counted}`);
      console.log(`${algorithm} 429 responses: ${result.rateLimited}`);
      console.log(`${algorithm} windows elapsed: ${result.windowsElapsed}`);
      console.log(
        `${algorithm} max requests in any ${windowSeconds} s window: ${result.maxInOneWindow} (quota ${quota})`,
      );
      console.log(`${algorithm} mean wait per request ms: ${result.meanWaitMs}`);
      console.log(`${algorithm} achieved share of the quota: ${result.share}`);
      console.log(`${algorithm} long-run theoretical share: ${result.theoreticalShare}`);
    }
    if (results.length === 2) {
      const best = results.reduce((a, b) => (b.share > a.share ? b : a));
      console.log(`closest to the quota: ${best.algorithm}`);
    }
    console.log(
      JSON.stringify({
        policy: { quota, windowSeconds },
        processes,
        concurrency,
        marginMs: margin,
        windows,
        results,
      }),
    );
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
