import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

describe('rate limit: 300 per sliding 60 s per access token (here 5 per 60 s)', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock, rateLimit: { quota: 5, windowSeconds: 60 } });
  });
  afterAll(() => sandbox.close());

  const newToken = async () => (await sandbox.admin('POST', '/tokens', {})).accessToken as string;

  it('when requests stay within the quota, then each carries RateLimit-Policy, RateLimit and the legacy headers', async () => {
    const token = await newToken();
    const first = await sandbox.call('GET', '/status', { token });
    expect(first.headers.get('ratelimit-policy')).toBe('"public-api";q=5;w=60');
    const r = await sandbox.call('GET', '/organizations', { token });
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-policy')).toBe('"public-api";q=5;w=60');
    expect(r.headers.get('ratelimit')).toBe('"public-api";r=4;t=60');
    expect(r.headers.get('x-ratelimit-limit')).toBe('5');
    expect(r.headers.get('x-ratelimit-remaining')).toBe('4');
    expect(Number(r.headers.get('x-ratelimit-reset'))).toBe(Math.ceil(clock.now().getTime() / 1000) + 60);
  });

  it('when the quota is used up, then the next request gets 429 with Retry-After and the specified error body', async () => {
    const token = await newToken();
    for (let i = 0; i < 5; i++)
      expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(200);
    clock.advance(20_000);
    const r = await sandbox.call('GET', '/organizations', { token });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('40');
    expect(r.headers.get('ratelimit')).toBe('"public-api";r=0;t=40');
    expect(r.body).toMatchObject({
      code: 'HTTP_429',
      type: 'http',
      method: 'GET',
      path: '/api/public/v1/organizations',
      message: expect.any(String),
      frontMessage: expect.any(String),
      resolution: expect.stringContaining('Retry-After'),
    });
    expect(new Date(r.body.timestamp).toISOString()).toBe(r.body.timestamp);
  });

  it('when the window slides past the oldest requests, then requests are allowed again one by one', async () => {
    const token = await newToken();
    for (let i = 0; i < 5; i++) {
      await sandbox.call('GET', '/organizations', { token });
      clock.advance(10_000);
    }
    expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(429);
    clock.advance(10_000); // the first request is now 60 s old
    expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(200);
    expect((await sandbox.call('GET', '/organizations', { token })).status).toBe(429);
  });

  it('when one token is exhausted, then another token has its own budget', async () => {
    const a = await newToken();
    const b = await newToken();
    for (let i = 0; i < 5; i++) await sandbox.call('GET', '/organizations', { token: a });
    expect((await sandbox.call('GET', '/organizations', { token: a })).status).toBe(429);
    expect((await sandbox.call('GET', '/organizations', { token: b })).status).toBe(200);
  });

  it('when a request is unauthenticated, then the 401 carries RateLimit-Policy but no RateLimit', async () => {
    const r = await sandbox.call('GET', '/organizations', { token: null });
    expect(r.status).toBe(401);
    expect(r.headers.get('ratelimit-policy')).toBe('"public-api";q=5;w=60');
    expect(r.headers.get('ratelimit')).toBeNull();
  });

  it('when /mcp is called, then it shares the policy header and the per-token budget', async () => {
    const token = await newToken();
    for (let i = 0; i < 4; i++) await sandbox.call('GET', '/organizations', { token });
    const mcp = await sandbox.call('POST', '/mcp', {
      token,
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(mcp.headers.get('ratelimit-policy')).toBe('"public-api";q=5;w=60');
    expect(mcp.headers.get('ratelimit')).toBe('"public-api";r=0;t=60');
    expect((await sandbox.call('POST', '/mcp', { token, body: {} })).status).toBe(429);
  });

  it('when GET /status is called without a token, then it answers 200', async () => {
    const r = await sandbox.call('GET', '/status', { token: null });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('ok');
  });
});
