import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { exchange, newCode, pkcePair, refreshCall, tokenCall } from './oauth-support.js';

/** Spec default: 10 token-endpoint requests per 60 s per IP, policy name `auth`. */
const clock = new ManualClock();
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ clock });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(() => {
  // Each test starts with an empty window: every earlier call has left it.
  clock.advance(61_000);
});

const garbageCall = () => tokenCall(sandbox, { grant_type: 'password', client_id: sandbox.clientId });

describe('token endpoint rate limit (policy auth, 10 per 60 s per IP)', () => {
  it('when the token endpoint answers, then it carries the auth policy headers', async () => {
    const response = await garbageCall();
    const nowSeconds = Math.ceil(clock.now().getTime() / 1000);
    expect(response.headers.get('ratelimit-policy')).toBe('"auth";q=10;w=60');
    expect(response.headers.get('ratelimit')).toBe('"auth";r=9;t=60');
    expect(response.headers.get('x-ratelimit-limit')).toBe('10');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('9');
    expect(response.headers.get('x-ratelimit-reset')).toBe(String(nowSeconds + 60));
    expect(response.headers.get('retry-after')).toBeNull();
  });

  it('when a token exchange succeeds, then it carries the auth policy headers too', async () => {
    const { code, pkce } = await newCode(sandbox);
    const response = await exchange(sandbox, code, pkce.verifier);
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-policy')).toBe('"auth";q=10;w=60');
    expect(response.headers.get('ratelimit')).toBe('"auth";r=9;t=60');
  });

  it('when the 11th call arrives within 60 s, then 429 with Retry-After and the HTTP_429 error body', async () => {
    for (let i = 0; i < 10; i++) expect((await garbageCall()).status).toBe(400);
    clock.advance(15_000);
    const response = await garbageCall();
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('45');
    expect(response.headers.get('ratelimit-policy')).toBe('"auth";q=10;w=60');
    expect(response.headers.get('ratelimit')).toBe('"auth";r=0;t=45');
    expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(response.body).toMatchObject({
      code: 'HTTP_429',
      type: 'http',
      path: '/api/oauth/token',
      method: 'POST',
    });
    expect(response.body.message).toMatch(/.+/);
    expect(response.body.frontMessage).toMatch(/.+/);
    expect(response.body.resolution).toMatch(/Retry-After/);
    expect(Number.isNaN(Date.parse(response.body.timestamp))).toBe(false);
  });

  it('when all grants and failures are mixed, then every call counts against the same budget', async () => {
    const { code, pkce } = await newCode(sandbox);
    const tokens = (await exchange(sandbox, code, pkce.verifier)).body;
    expect((await refreshCall(sandbox, tokens.refresh_token)).status).toBe(200);
    expect((await exchange(sandbox, 'sbx_code_unknown', pkcePair().verifier)).status).toBe(400);
    const unreadable = await fetch(new URL('/api/oauth/token', sandbox.baseUrl), { method: 'POST' });
    expect(unreadable.headers.get('ratelimit')).toBe('"auth";r=6;t=60');
    for (let i = 0; i < 6; i++) await garbageCall();
    const refused = await refreshCall(sandbox, tokens.refresh_token);
    expect(refused.status).toBe(429);
  });

  it('when a valid code arrives over the limit, then it is refused without spending the code', async () => {
    for (let i = 0; i < 10; i++) await garbageCall();
    clock.advance(50_000);
    const { code, pkce } = await newCode(sandbox);
    expect((await exchange(sandbox, code, pkce.verifier)).status).toBe(429);
    clock.advance(10_000); // the first calls leave the window; the code has 50 s left
    expect((await exchange(sandbox, code, pkce.verifier)).status).toBe(200);
  });

  it('when the window has passed, then the endpoint answers again', async () => {
    for (let i = 0; i < 10; i++) await garbageCall();
    expect((await garbageCall()).status).toBe(429);
    clock.advance(60_000);
    const response = await garbageCall();
    expect(response.status).toBe(400);
    expect(response.headers.get('ratelimit')).toBe('"auth";r=9;t=60');
  });

  it('when the token endpoint is exhausted, then the Public API budget is unaffected', async () => {
    for (let i = 0; i < 11; i++) await garbageCall();
    const api = await sandbox.call('GET', '/status');
    expect(api.status).toBe(200);
    const mcp = await sandbox.call('POST', '/mcp', { body: { jsonrpc: '2.0', id: 1 } });
    expect(mcp.status).toBe(200);
    expect(mcp.headers.get('ratelimit-policy')).toBe('"public-api";q=300;w=60');
  });
});
