import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  countSandboxRequests,
  maxInAnySpan,
  type RunningWorkers,
  spawnLimiterWorkers,
  type WorkerReport,
} from '../../support/limiter-worker.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-rl-processes-${randomUUID().slice(0, 8)}`;

/**
 * Real time, on purpose: separate processes agree on the window and the pause only through the
 * scripts' Redis `TIME` (production's clock), which a virtual clock would stand in for. The other
 * limiter tests run on a virtual clock (test/support/virtual-time.ts).
 */
describe('rate limiter shared by 4 processes through Redis, against the sandbox over HTTP (real time, Redis TIME)', () => {
  let redis: Redis;
  let sandbox: TestSandbox | undefined;
  let workers: RunningWorkers | undefined;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
  });
  afterAll(async () => {
    workers?.kill();
    await sandbox?.close();
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  const all = (reports: WorkerReport[]) => reports.flatMap((r) => r.requests);

  it('when 4 processes × 8 in flight share one token for 3.75 windows of q=20 w=2 s, then the sandbox answers no 429 and counts at least 80 % of its maximum', async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 20, windowSeconds: 2 } });
    const server = countSandboxRequests(sandbox.deps);
    // 3.75 windows: the fourth burst (each slot is reused every w + margin + the time to the
    // answer, as entries are restamped) starts well before the end.
    const durationMs = 7_500;
    workers = await spawnLimiterWorkers(4, {
      redisUrl: REDIS_URL,
      prefix: PREFIX,
      key: 'budget-throughput',
      baseUrl: sandbox.baseUrl,
      token: sandbox.accessToken,
      concurrency: 8,
      durationMs,
    });
    const reports = await workers.go();
    const requests = all(reports);

    expect(requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(server.refused()).toBe(0);
    expect(requests.every((r) => r.status === 200)).toBe(true);
    expect(server.counted).toHaveLength(requests.length);
    expect(maxInAnySpan(server.counted, 2_000)).toBeLessThanOrEqual(20);
    const theoreticalMax = 20 * Math.ceil(durationMs / 2_000);
    expect(requests.length).toBeGreaterThanOrEqual(0.8 * theoreticalMax);
    // Every process took part, and none read its own traffic as another client's.
    expect(reports.every((r) => r.requests.length > 0)).toBe(true);
    expect(reports.reduce((sum, r) => sum + r.stats.foreignRequests, 0)).toBe(0);
    await sandbox.close();
    sandbox = undefined;
  }, 20_000);

  it('when one process gets a 429 with Retry-After 2, then no process sends anything for about 2 s', async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 1000, windowSeconds: 10 } });
    const server = countSandboxRequests(sandbox.deps);
    workers = await spawnLimiterWorkers(4, {
      redisUrl: REDIS_URL,
      prefix: PREFIX,
      key: 'budget-pause',
      baseUrl: sandbox.baseUrl,
      token: sandbox.accessToken,
      concurrency: 1,
      intervalMs: 40,
      durationMs: 5_000,
    });
    const run = workers.go();
    // Warm: the first answer has told the policy and the workers send at their steady pace (each
    // one about every 40 ms); 40 requests counted is about half a second of it. The bound leaves
    // the 2 s pause and the resumption inside the workers' 5 s run.
    await vi.waitFor(() => expect(server.counted.length).toBeGreaterThanOrEqual(40), { timeout: 2_500 });
    await sandbox.admin('PUT', '/faults', { force429: 1, force429RetryAfter: 2 });
    const reports = await run;

    const refused = reports.filter((r) => r.requests.some((q) => q.status === 429));
    expect(refused).toHaveLength(1);
    const hit = refused[0]!.requests.find((q) => q.status === 429)!;
    const quiet = all(reports).filter((q) => q.sentAt > hit.doneAt + 50 && q.sentAt < hit.doneAt + 1_950);
    expect(quiet).toEqual([]);
    for (const other of reports.filter((r) => r !== refused[0])) {
      const resumed = other.requests.find((q) => q.sentAt > hit.doneAt + 50);
      expect(resumed, `process ${other.pid} resumed`).toBeDefined();
      const gap = resumed!.sentAt - hit.doneAt;
      expect(gap).toBeGreaterThanOrEqual(1_950);
      expect(gap).toBeLessThan(2_600);
      expect(other.stats.waitedMsTotal).toBeGreaterThanOrEqual(1_900);
    }
    expect(refused[0]!.stats).toMatchObject({ rateLimited: 1, pauses: 1 });
  }, 20_000);
});
