import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import { loadConfig } from '../../../src/config/load.js';
import { createLogger } from '../../../src/logging/logger.js';
import { ACCOUNT_HEADER, dropCsv } from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** The scaled-down policy of the test: 60 requests per 10 s (the spec's is 300 per 60 s). */
const QUOTA = 60;
const WINDOW_S = 10;
/** The bound this test states for a 20-row source behind a backlog on the same token. */
const SMALL_PASS_BOUND_MS = 2 * WINDOW_S * 1000 + 3000;

/**
 * Fair queuing between the sources of one token (docs/rate-limiting.md, "Fair queuing between
 * sources"), end to end: two passes of one process share a token through the Redis limiter while a
 * backlog runs; the small one finishes within a stated bound, the budget stays used, no 429.
 */
describe('fair share of one token between a backlog and a small source', () => {
  const silent = createLogger({ level: 'silent' });
  const schema = uniqueSchema('fairshare');
  const prefix = `rs-fair-${process.pid}-${Date.now()}`;
  let sandbox: TestSandbox;
  let dir: string;
  const answers: Array<{ at: number; status: number; source: string }> = [];
  /** Attributes each answered request to its source by the sourceIds it carries (B- or S-). */
  const recording: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    const text = `${decodeURIComponent(url)} ${typeof init?.body === 'string' ? init.body : ''}`;
    const source =
      text.includes('"B-') || text.includes(':B-') ? 'big' : text.includes('S-') ? 'small' : 'other';
    const response = await fetch(input, init);
    answers.push({ at: performance.now(), status: response.status, source });
    return response;
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: QUOTA, windowSeconds: WINDOW_S } });
    dir = mkdtempSync(join(tmpdir(), 'rs-fair-'));
  });

  afterAll(async () => {
    await sandbox?.close();
    await dropSchema(schema);
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a 20-row source starts while a 180-row backlog runs on the same token, then it finishes within two windows and a few seconds, the budget stays >= 0.95 used, and no request is refused', async () => {
    const rows = (prefix: string, n: number) =>
      Array.from(
        { length: n },
        (_, i) => `${prefix}${i},${prefix} customer ${i},EUR,1 rue du Port,Nantes,44000,FR,,`,
      );
    dropCsv(join(dir, 'big'), 'accounts.csv', ACCOUNT_HEADER, rows('B-', 180));
    const file = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'data')} }`,
        `queue: { prefix: ${prefix} }`,
        'sources:',
        `  - { id: big, type: csv, dropDir: ${join(dir, 'big')}, stableSeconds: 0 }`,
        `  - { id: small, type: csv, dropDir: ${join(dir, 'small')}, stableSeconds: 0 }`,
      ].join('\n'),
    );
    const loaded = loadConfig({
      file,
      env: {
        ...apiEnvOf(sandbox),
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL,
      },
    });
    const runtime = await openSyncRuntime(loaded, silent, { fetch: recording });
    try {
      const service = syncServiceOf(runtime, loaded.config.sources);
      const big = service.syncSource('big');
      // The backlog has used its first window and waits for the next one when the small source starts.
      await new Promise((resolve) => setTimeout(resolve, WINDOW_S * 1000 + 2000));
      dropCsv(join(dir, 'small'), 'accounts.csv', ACCOUNT_HEADER, rows('S-', 20));
      const started = performance.now();
      const [small] = await service.syncSource('small');
      const smallMs = performance.now() - started;
      const [bigSummary] = await big;

      expect(small?.counts.accounts.created).toBe(20);
      expect(bigSummary?.counts.accounts.created).toBe(180);
      expect(smallMs).toBeLessThan(SMALL_PASS_BOUND_MS);
      // The big source was still waiting for the budget when the small one finished.
      const lastSmall = Math.max(...answers.filter((a) => a.source === 'small').map((a) => a.at));
      expect(answers.some((a) => a.source === 'big' && a.at > lastSmall)).toBe(true);
      expect(answers.filter((a) => a.status === 429)).toEqual([]);

      // Budget use: each request's slot was used again by the request QUOTA later, one window (the
      // server's) apart at best; their mean ratio is the share of the quota used. From the second
      // window on: the first is the idle budget's burst, whose slots the pace hands out again over
      // the next window (as many per window as unpaced, spread).
      const times = answers.map((a) => a.at).sort((x, y) => x - y);
      const ratios = times
        .slice(QUOTA, times.length - QUOTA)
        .map((t, i) => (WINDOW_S * 1000) / (times[i + 2 * QUOTA]! - t));
      const used = ratios.reduce((a, b) => a + b, 0) / ratios.length;
      console.info(
        `fair share: small pass ${Math.round(smallMs)} ms (bound ${SMALL_PASS_BOUND_MS}), budget used ${used.toFixed(3)}, ${answers.length} requests`,
      );
      expect(used).toBeGreaterThanOrEqual(0.95);
      expect(Math.max(...ratios)).toBeLessThanOrEqual(1);
      // Exactly once on the service.
      const ids = [...sandbox.deps.store.accounts.values()].map((a) => a.source?.sourceId);
      expect(new Set(ids).size).toBe(200);
      expect(ids).toHaveLength(200);
    } finally {
      await runtime.close();
    }
  }, 120_000);
});
