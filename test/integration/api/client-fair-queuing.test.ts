import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { type Flow, withFlow } from '../../../src/api/rate-limit/flow.js';
import type { MeteredRateLimiter } from '../../../src/api/rate-limit/types.js';
import { countSandboxRequests, maxInAnySpan } from '../../support/limiter-worker.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { clientFor } from './client-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-client-fair-${randomUUID().slice(0, 8)}`;
const QUOTA = 60;
const WINDOW_SECONDS = 10;
/** w + the default margin (250 ms): how often each slot is reused. */
const SPAN_MS = WINDOW_SECONDS * 1000 + 250;

describe('the client with two sources on one token (real sandbox, limiter shared through Redis)', () => {
  let sandbox: TestSandbox;
  let redis: Redis;
  let limiter: MeteredRateLimiter;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: QUOTA, windowSeconds: WINDOW_SECONDS } });
    redis = new Redis(REDIS_URL);
    limiter = createRateLimiter({ redis, prefix: PREFIX });
  });
  afterAll(async () => {
    await limiter.close();
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await sandbox.close();
  });

  it('when a 20-request source starts behind a 220-request backlog of another, then it finishes within one span, with no 429 and the quota used', async () => {
    const server = countSandboxRequests(sandbox.deps);
    // Records the flow each request reaches the limiter with (it must survive the per-flow queues).
    const flowsSeen = new Map<string, number>();
    const recording: MeteredRateLimiter = {
      ...limiter,
      acquire: (key, signal, flow) => {
        flowsSeen.set(flow?.id ?? '?', (flowsSeen.get(flow?.id ?? '?') ?? 0) + 1);
        return limiter.acquire(key, signal, flow);
      },
      observe: (key, info) => limiter.observe(key, info),
      stats: () => limiter.stats(),
      close: () => limiter.close(),
    };
    const { client, sent } = clientFor(sandbox, { limiter: recording, concurrency: 8 });
    const pass = (flow: Flow, requests: number) =>
      withFlow(flow, async () => {
        const started = Date.now();
        await Promise.all(
          Array.from({ length: requests }, () => client.organizations.get(sandbox.organizationId)),
        );
        return { started, ended: Date.now() };
      });

    const backlog = pass({ id: 'erp-backlog', weight: 1 }, 220);
    // 2 s in, the first window's 60 requests are all the backlog's and the rest of it waits.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const small = await pass({ id: 'crm', weight: 1 }, 20);
    const big = await backlog;
    await client.close();

    // Its requests wait for the first freed slots (10.25 s after the backlog's first ones, so at
    // most 8.25 s after it starts) and take about half of them; 4 s of margin for a loaded host.
    // First-come, it would wait behind the backlog's 160 others: 3 more spans (about 31 s).
    const smallMs = small.ended - small.started;
    expect(smallMs).toBeLessThan(SPAN_MS - 2_000 + 4_000);
    expect(big.ended - small.ended).toBeGreaterThan(SPAN_MS);
    expect(Object.fromEntries(flowsSeen)).toEqual({ 'erp-backlog': 220, crm: 20 });

    expect(sent.map((s) => s.status).filter((s) => s !== 200)).toEqual([]);
    expect(client.stats).toMatchObject({ requests: 240, rateLimited: 0 });
    expect(server.refused()).toBe(0);
    expect(maxInAnySpan(server.counted, WINDOW_SECONDS * 1000)).toBeLessThanOrEqual(QUOTA);
    // Busy from the first request to the last: the most the policy lets through in that time is
    // q per started window, 1 + (last − first) / w windows (240 = 4 × q, so the last window is full).
    const counted = [...server.counted].sort((a, b) => a - b);
    const windows = 1 + (counted.at(-1)! - counted[0]!) / (WINDOW_SECONDS * 1000);
    const share = counted.length / (QUOTA * windows);
    expect(share).toBeGreaterThanOrEqual(0.95);
    console.info(
      `two flows on one token: the 20-request flow took ${smallMs} ms (backlog: ${big.ended - big.started} ms); share of the quota ${share.toFixed(3)} over ${windows.toFixed(2)} windows; checks per admission ${((limiter.stats().checks ?? 0) / 240).toFixed(2)}`,
    );
  }, 90_000);
});
