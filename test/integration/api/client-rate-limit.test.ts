import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import type { MeteredRateLimiter } from '../../../src/api/rate-limit/types.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { clientFor } from './client-support.js';

describe('the client with the in-process rate limiter', () => {
  let sandbox: TestSandbox;
  let limiter: MeteredRateLimiter;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 5, windowSeconds: 1 } });
    limiter = createRateLimiter({});
  });
  afterAll(async () => {
    await limiter.close();
    await sandbox.close();
  });

  it('when more requests than the advertised quota are sent at once, then none gets a 429 and the waits are counted', async () => {
    const { client, sent } = clientFor(sandbox, { limiter, concurrency: 8 });
    const results = await Promise.all(
      Array.from({ length: 14 }, () => client.organizations.get(sandbox.organizationId)),
    );
    expect(results.every((org) => org.id === sandbox.organizationId)).toBe(true);
    expect(sent.map((s) => s.status)).toEqual(Array(14).fill(200));
    expect(client.stats).toMatchObject({ requests: 14, rateLimited: 0, retries: 0 });
    expect(client.stats.waitedMs).toBeGreaterThan(1_000);
    expect(limiter.stats().acquired).toBe(14);
  });
});
