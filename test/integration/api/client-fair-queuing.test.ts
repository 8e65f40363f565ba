import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { type Flow, withFlow } from '../../../src/api/rate-limit/flow.js';
import { PACE_SLICES } from '../../../src/api/rate-limit/policy.js';
import type { MeteredRateLimiter } from '../../../src/api/rate-limit/types.js';
import { countSandboxRequests, maxInAnySpan } from '../../support/limiter-worker.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { VirtualTime } from '../../support/virtual-time.js';
import { clientFor, recordingFetch } from './client-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-client-fair-${randomUUID().slice(0, 8)}`;
const QUOTA = 60;
const WINDOW_SECONDS = 10;
/** w + the default margin (250 ms): how often each slot is reused. */
const SPAN_MS = WINDOW_SECONDS * 1000 + 250;

/**
 * The sandbox, the client and the limiter share one virtual clock (test/support/virtual-time.ts;
 * the limiter's scripts take it with `timeSource: 'clock'`): the windows take no real time, and
 * the clock moves on only when no request and no Redis command is under way.
 */
describe('the client with two sources on one token (real sandbox, limiter shared through Redis)', () => {
  const time = new VirtualTime();
  let sandbox: TestSandbox;
  let redis: Redis;
  let limiter: MeteredRateLimiter;

  beforeAll(async () => {
    sandbox = await startTestSandbox({
      rateLimit: { quota: QUOTA, windowSeconds: WINDOW_SECONDS },
      clock: time.clock,
    });
    redis = time.watch(new Redis(REDIS_URL));
    limiter = createRateLimiter({
      redis,
      prefix: PREFIX,
      clock: time.clock,
      sleep: time.sleep,
      timeSource: 'clock',
    });
  });
  afterAll(async () => {
    await limiter.close();
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await sandbox.close();
  });

  it('when a 20-request source starts behind a 220-request backlog of another, then it is admitted within a slice of the paced budget and finishes within its share of it, with no 429 and the quota used', async () => {
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
    const http = recordingFetch();
    const { client } = clientFor(sandbox, {
      limiter: recording,
      concurrency: 8,
      clock: time.clock,
      fetch: time.fetch(http.fetch),
    });
    const sent = http.sent;
    const pass = (flow: Flow, requests: number) =>
      withFlow(flow, async () => {
        const started = time.t;
        await Promise.all(
          Array.from({ length: requests }, () => client.organizations.get(sandbox.organizationId)),
        );
        return { started, ended: time.t };
      });

    const { small, big } = await time.run(
      (async () => {
        const backlog = pass({ id: 'erp-backlog', weight: 1 }, 220);
        // 12 s in, the backlog used its first window's 60 requests at once and the budget is saturated:
        // its freed slots are handed out a pace slice at a time (PACE_SLICES), the rest of it waits.
        await time.sleep(12_000);
        const small = await pass({ id: 'crm', weight: 1 }, 20);
        return { small, big: await backlog };
      })(),
    );
    await client.close();

    // Its first request waits at most a slice, then it takes half of each slice's q / P requests:
    // 20 requests in 8 slices (on the virtual clock a loaded host adds no delay). First-come, it
    // would wait behind the backlog's 100 others still queued (about 17 s), unpaced for the next
    // burst (up to a span).
    const slice = Math.ceil(SPAN_MS / PACE_SLICES);
    const burst = Math.ceil(QUOTA / PACE_SLICES);
    const smallMs = small.ended - small.started;
    expect(smallMs).toBeLessThan(slice * (1 + (2 * 20) / burst));
    expect(big.ended - small.ended).toBeGreaterThan(SPAN_MS);
    expect(Object.fromEntries(flowsSeen)).toEqual({ 'erp-backlog': 220, crm: 20 });

    expect(sent.map((s) => s.status).filter((s) => s !== 200)).toEqual([]);
    expect(client.stats).toMatchObject({ requests: 240, rateLimited: 0 });
    expect(server.refused()).toBe(0);
    expect(maxInAnySpan(server.counted, WINDOW_SECONDS * 1000)).toBeLessThanOrEqual(QUOTA);
    // From the second window on (the first is the idle budget's burst, whose slots the pace hands
    // out again over the next window), the rate the server counted against the policy's q / w.
    const counted = [...server.counted].sort((a, b) => a - b);
    const steady = counted.filter((t) => t >= counted[0]! + SPAN_MS);
    const perSecond = ((steady.length - 1) * 1000) / (steady.at(-1)! - steady[0]!);
    const share = perSecond / (QUOTA / WINDOW_SECONDS);
    expect(share).toBeGreaterThanOrEqual(0.95);
    console.info(
      `two flows on one token: the 20-request flow took ${smallMs} ms (backlog: ${big.ended - big.started} ms); share of the quota ${share.toFixed(3)} from the second window on; checks per admission ${((limiter.stats().checks ?? 0) / 240).toFixed(2)}`,
    );
  });
});
