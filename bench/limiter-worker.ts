/**
 * The worker process of `bench/limiter.ts`: test/support/limiter-worker.ts with the limiter the
 * bench measures, the production sliding log or the token bucket (limiter-token-bucket.ts).
 */
import { fileURLToPath } from 'node:url';
import {
  type LimiterFactory,
  productionLimiter,
  runAsWorker,
  type WorkerArgs,
} from '../test/support/limiter-worker.js';
import { TokenBucketRateLimiter } from './limiter-token-bucket.js';

export type LimiterAlgorithm = 'sliding-log' | 'token-bucket';

export interface BenchWorkerArgs extends WorkerArgs {
  algorithm: LimiterAlgorithm;
}

/** This script, for `spawnLimiterWorkers`. */
export const BENCH_WORKER_SCRIPT = fileURLToPath(import.meta.url);

const benchLimiter: LimiterFactory<BenchWorkerArgs> = (args, redis, common) =>
  args.algorithm === 'token-bucket' && redis
    ? new TokenBucketRateLimiter({ ...common, redis, prefix: args.prefix })
    : productionLimiter(args, redis, common);

if (process.argv[1] === BENCH_WORKER_SCRIPT) runAsWorker(benchLimiter);
