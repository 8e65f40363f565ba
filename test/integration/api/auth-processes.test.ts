import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EncryptedFileStore } from '../../../src/api/auth/encrypted-file-store.js';
import { credentialsPathOf } from '../../../src/api/auth/token-provider-factory.js';
import { type RefreshWorkers, spawnRefreshWorkers } from '../../support/refresh-worker.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { leaked, parseLogLines, refreshLines, TOKEN_KEY, tempDir } from './auth-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-auth-processes-${randomUUID().slice(0, 8)}`;

describe('8 processes refreshing one set of credentials (file store, file + Redis lock, Redis token budget)', () => {
  let redis: Redis;
  let sandbox: TestSandbox;
  let dir: { dir: string; remove: () => Promise<void> };
  let workers: RefreshWorkers | undefined;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    dir = await tempDir();
    sandbox = await startTestSandbox({
      accessTokenTtlSeconds: 2,
      rateLimit: { quota: 100_000, windowSeconds: 60 },
    });
  });
  afterAll(async () => {
    workers?.kill();
    await sandbox.close();
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
    await dir.remove();
  });

  it('when tokens expire every 2 s for 6.5 s, then one token call per expiry in all, every API call 200, no secret in any log', async () => {
    // Spawned first: the workers read the store only after "go", so the seeded token is still young then.
    workers = await spawnRefreshWorkers(8, {
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      dataDir: dir.dir,
      tokenKey: TOKEN_KEY,
      redisUrl: REDIS_URL,
      prefix: PREFIX,
      durationMs: 6_500,
    });
    const issued = await sandbox.admin('POST', '/tokens', { withRefreshToken: true });
    const now = Date.now();
    const path = credentialsPathOf({ state: { dataDir: dir.dir } });
    await new EncryptedFileStore({ path, tokenKey: TOKEN_KEY }).save({
      issuer: sandbox.baseUrl,
      tokenEndpoint: `${sandbox.baseUrl}/api/oauth/token`,
      clientId: sandbox.clientId,
      accessToken: issued.accessToken,
      accessTokenExpiresAt: now + issued.expiresIn * 1000,
      refreshToken: issued.refreshToken,
      scopes: [...issued.scopes],
      obtainedAt: now,
    });
    const grantsBefore = (await sandbox.admin('GET', '/stats')).tokenGrants;

    const { reports, logs } = await workers.go();

    const refreshes = (await sandbox.admin('GET', '/stats')).tokenGrants - grantsBefore;
    const calls = reports.flatMap((r) => r.tokenCalls).sort((a, b) => a.at - b.at);
    expect(reports.flatMap((r) => r.errors)).toEqual([]);
    expect(reports.every((r) => r.statuses.length > 20)).toBe(true);
    expect(reports.flatMap((r) => r.statuses).filter((s) => s !== 200)).toEqual([]);
    expect(calls.every((c) => c.status === 200)).toBe(true);
    expect(calls).toHaveLength(refreshes);
    expect(refreshes).toBeGreaterThanOrEqual(3);
    expect(refreshes).toBeLessThanOrEqual(Math.ceil(6_500 / 1_600));
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i]!.at);
    expect(Math.min(...gaps)).toBeGreaterThan(1_000);
    expect(new Set(reports.flatMap((r) => r.tokens)).size).toBe(refreshes + 1);
    // Processes that never called the token endpoint went on with tokens another process obtained.
    expect(reports.some((r) => r.tokenCalls.length === 0 && r.tokens.length >= 2)).toBe(true);
    const secrets = [...reports.flatMap((r) => r.secrets), issued.accessToken, issued.refreshToken];
    // Each refresh is logged once, by the process that made it, with what it obtained.
    const logged = refreshLines(parseLogLines(logs));
    expect(logged).toHaveLength(refreshes);
    for (const line of logged) {
      expect(line).toMatchObject({ reason: 'expiring', expiresInSeconds: 2, rotated: true });
    }
    expect(leaked(logs, secrets)).toEqual([]);
  });
});
