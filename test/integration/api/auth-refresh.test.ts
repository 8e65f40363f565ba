import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EncryptedFileStore } from '../../../src/api/auth/encrypted-file-store.js';
import { FileRefreshLock } from '../../../src/api/auth/file-refresh-lock.js';
import { RedisRefreshLock } from '../../../src/api/auth/redis-refresh-lock.js';
import type { RefreshLock } from '../../../src/api/auth/refresh-lock.js';
import { RefreshingTokenProvider } from '../../../src/api/auth/refreshing-token-provider.js';
import { TokenEndpointClient } from '../../../src/api/auth/token-endpoint.js';
import { createTokenEndpointLimiter } from '../../../src/api/auth/token-endpoint-limiter.js';
import type { StoredCredentials } from '../../../src/api/auth/token-storage.js';
import { LoginRequiredError } from '../../../src/api/errors.js';
import { type Clock, ManualClock } from '../../../src/domain/clock.js';
import type { Logger } from '../../../src/logging/logger.js';
import type { SandboxOverrides } from '../../../src/sandbox/options.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { captureLogs, leaked, recordingFetch, refreshLines, TOKEN_KEY, tempDir } from './auth-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `test-auth-refresh-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let dir: { dir: string; remove: () => Promise<void> };
let sandbox: TestSandbox | undefined;

beforeAll(() => {
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  const keys = await redis.keys(`${PREFIX}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});
beforeEach(async () => {
  dir = await tempDir();
  return async () => {
    await sandbox?.close();
    sandbox = undefined;
    await dir.remove();
  };
});

/** Credentials as `auth import` would leave them, from tokens the sandbox issues without a token call. */
async function seed(sb: TestSandbox, path: string): Promise<StoredCredentials> {
  const issued = await sb.admin('POST', '/tokens', { withRefreshToken: true });
  const now = Date.now();
  const credentials: StoredCredentials = {
    issuer: sb.baseUrl,
    tokenEndpoint: `${sb.baseUrl}/api/oauth/token`,
    clientId: sb.clientId,
    accessToken: issued.accessToken,
    accessTokenExpiresAt: now + issued.expiresIn * 1000,
    refreshToken: issued.refreshToken,
    scopes: [...issued.scopes],
    obtainedAt: now,
  };
  await new EncryptedFileStore({ path, tokenKey: TOKEN_KEY }).save(credentials);
  return credentials;
}

/** One client as a separate process would build it: its own store object, cache, lock handle and limiter. */
function client(path: string, lock: RefreshLock, fetchImpl: typeof fetch, log: Logger, clock?: Clock) {
  const limiter = createTokenEndpointLimiter({ redis, prefix: PREFIX });
  const tokenEndpoint = new TokenEndpointClient({ limiter, fetch: fetchImpl, log });
  const store = new EncryptedFileStore({ path, tokenKey: TOKEN_KEY, log });
  return new RefreshingTokenProvider({ store, lock, tokenEndpoint, log, ...(clock ? { clock } : {}) });
}

/** A handle on the lock every client shares: the same Redis key, or the same lock file. */
const lockFor = (kind: string, path: string): RefreshLock =>
  kind === 'redis'
    ? new RedisRefreshLock({ redis, key: `${PREFIX}:lock:${kind}`, pollMs: 10 })
    : new FileRefreshLock({ path: `${path}.lock`, pollMs: 10 });

interface Run {
  statuses: number[];
  tokens: Set<string>;
  errors: unknown[];
}

/** `n` clients call getAccessToken + GET /organizations in a loop for `durationMs`. */
async function hammer(
  sb: TestSandbox,
  providers: RefreshingTokenProvider[],
  durationMs: number,
): Promise<Run> {
  const run: Run = { statuses: [], tokens: new Set(), errors: [] };
  const deadline = Date.now() + durationMs;
  await Promise.all(
    providers.map(async (provider) => {
      while (Date.now() < deadline) {
        try {
          const token = await provider.getAccessToken();
          run.tokens.add(token);
          run.statuses.push((await sb.call('GET', '/organizations', { token })).status);
        } catch (error) {
          run.errors.push(error);
          return;
        }
        // Pacing, not a wait: each client works 20-50 ms between calls while the tokens expire in
        // real time (the sandbox issues them), as clients of a running sync would.
        await new Promise((r) => setTimeout(r, 20 + Math.random() * 30));
      }
    }),
  );
  return run;
}

const maxInAnySpan = (times: number[], spanMs: number) =>
  Math.max(0, ...times.map((t) => times.filter((u) => u >= t && u < t + spanMs).length));

describe.each(['redis', 'file'])(
  '8 concurrent clients sharing the credentials file and a %s lock',
  (lockKind) => {
    const TTL_SECONDS = 2;
    const options: SandboxOverrides = {
      accessTokenTtlSeconds: TTL_SECONDS,
      rateLimit: { quota: 100_000, windowSeconds: 60 }, // the API budget is not under test here
    };

    it('when tokens expire every 2 s for 6.5 s, then exactly one token call per expiry, no reuse, every API call 200, no secret logged', async () => {
      sandbox = await startTestSandbox(options);
      const path = join(dir.dir, 'credentials.enc');
      const seeded = await seed(sandbox, path);
      const grantsBefore = (await sandbox.admin('GET', '/stats')).tokenGrants;
      const wire = recordingFetch();
      const logs = captureLogs();
      const providers = Array.from({ length: 8 }, (_, n) =>
        client(path, lockFor(lockKind, path), wire.fetch, logs.log.child({ client: n })),
      );

      const run = await hammer(sandbox, providers, 6_500);

      const refreshes = (await sandbox.admin('GET', '/stats')).tokenGrants - grantsBefore;
      expect(run.errors).toEqual([]);
      expect(run.statuses.length).toBeGreaterThan(100);
      expect(run.statuses.filter((s) => s !== 200)).toEqual([]); // a reused refresh token would revoke the family: 401s
      expect(wire.tokenCalls.every((c) => c.status === 200 && c.grantType === 'refresh_token')).toBe(true);
      expect(wire.tokenCalls).toHaveLength(refreshes); // every call was a grant: no refusal, no 429
      // One call per expiry: a token lives 2 s and is refreshed at 80 % of its life (1.6 s).
      expect(refreshes).toBeGreaterThanOrEqual(3);
      expect(refreshes).toBeLessThanOrEqual(Math.ceil(6_500 / 1_600));
      const gaps = wire.tokenCalls.slice(1).map((c, i) => c.at - wire.tokenCalls[i]!.at);
      expect(Math.min(...gaps)).toBeGreaterThan(1_000);
      expect(run.tokens.size).toBe(refreshes + 1); // the seeded token, then one per refresh, all used
      expect(
        maxInAnySpan(
          wire.tokenCalls.map((c) => c.at),
          60_000,
        ),
      ).toBeLessThanOrEqual(10);
      const secrets = [...wire.secrets, seeded.accessToken, seeded.refreshToken!];
      expect(leaked(logs.text(), secrets)).toEqual([]);
      // Each refresh is logged once, by the client that made it, with what it obtained.
      const logged = refreshLines(logs.entries());
      expect(logged).toHaveLength(refreshes);
      for (const line of logged) {
        expect(line).toMatchObject({ reason: 'expiring', expiresInSeconds: TTL_SECONDS, rotated: true });
      }
    });
  },
);

describe('when the stored refresh token was already spent elsewhere', () => {
  it('then all 8 clients get LoginRequiredError after exactly one token call, and none calls again', async () => {
    sandbox = await startTestSandbox({ accessTokenTtlSeconds: 1 });
    const path = join(dir.dir, 'credentials.enc');
    const seeded = await seed(sandbox, path);
    // Someone used the refresh token outside this store: the stored one is now spent.
    const spent = await fetch(`${sandbox.baseUrl}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: seeded.refreshToken!,
        client_id: sandbox.clientId,
      }),
    });
    expect(spent.status).toBe(200);
    const wire = recordingFetch();
    const logs = captureLogs();
    const key = `${PREFIX}:lock:spent`;
    const clock = new ManualClock(seeded.obtainedAt);
    const providers = Array.from({ length: 8 }, (_, n) =>
      client(
        path,
        new RedisRefreshLock({ redis, key, pollMs: 10 }),
        wire.fetch,
        logs.log.child({ client: n }),
        clock,
      ),
    );
    clock.set(seeded.accessTokenExpiresAt!); // the seeded access token expires

    const first = await Promise.allSettled(providers.map((p) => p.getAccessToken()));
    const again = await Promise.allSettled(providers.map((p) => p.getAccessToken()));

    for (const outcome of [...first, ...again]) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(LoginRequiredError);
      expect(String((outcome as PromiseRejectedResult).reason.message)).toMatch(/auth login/);
    }
    expect(wire.tokenCalls).toHaveLength(1);
    expect(wire.tokenCalls[0]!.status).toBe(400);
    expect((await new EncryptedFileStore({ path, tokenKey: TOKEN_KEY }).load())?.refreshToken).toBeNull();
    expect(leaked(logs.text(), [seeded.accessToken, seeded.refreshToken!])).toEqual([]);
  });
});

describe('when the token endpoint announces a smaller budget than 10 / 60 s', () => {
  it('then the clients follow "auth";q=3;w=4 and never get a 429, waiting for budget instead', async () => {
    sandbox = await startTestSandbox({
      accessTokenTtlSeconds: 1,
      tokenRateLimit: { quota: 3, windowSeconds: 4 },
      rateLimit: { quota: 100_000, windowSeconds: 60 },
    });
    const path = join(dir.dir, 'credentials.enc');
    await seed(sandbox, path);
    const wire = recordingFetch();
    const logs = captureLogs();
    const key = `${PREFIX}:lock:policy`;
    const limiterPrefix = `${PREFIX}-policy`;
    const providers = Array.from({ length: 4 }, () => {
      const limiter = createTokenEndpointLimiter({ redis, prefix: limiterPrefix });
      const tokenEndpoint = new TokenEndpointClient({ limiter, fetch: wire.fetch, log: logs.log });
      const store = new EncryptedFileStore({ path, tokenKey: TOKEN_KEY });
      return new RefreshingTokenProvider({
        store,
        lock: new RedisRefreshLock({ redis, key, pollMs: 10 }),
        tokenEndpoint,
      });
    });

    const run = await hammer(sandbox, providers, 7_000);

    expect(run.errors).toEqual([]);
    expect(wire.tokenCalls.length).toBeGreaterThanOrEqual(3);
    expect(wire.tokenCalls.filter((c) => c.status !== 200)).toEqual([]);
    expect(
      maxInAnySpan(
        wire.tokenCalls.map((c) => c.at),
        4_000,
      ),
    ).toBeLessThanOrEqual(3);
  });
});
