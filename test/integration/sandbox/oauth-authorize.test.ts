import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { authorize, authorizeParams, obtainTokens, pkcePair, REDIRECT_URI } from './oauth-support.js';

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ tokenRateLimit: { quota: 1000, windowSeconds: 60 } });
});
afterAll(async () => {
  await sandbox.close();
});

/** An authorization request for a fresh PKCE pair, with some parameters changed. */
const authorizeWith = (extra: Record<string, string | undefined>) =>
  authorize(sandbox, authorizeParams(sandbox, pkcePair(), extra));

/** The error a redirect carries, with the echoed state. */
const redirectError = (location: URL | undefined) => ({
  origin: location?.origin,
  error: location?.searchParams.get('error'),
  state: location?.searchParams.get('state'),
  code: location?.searchParams.get('code'),
});

describe('GET /api/oauth/authorize: success', () => {
  it('when a valid request arrives, then it consents at once and redirects with code, state and iss', async () => {
    const result = await authorizeWith({});
    expect(result.status).toBe(302);
    expect(`${result.location?.origin}${result.location?.pathname}`).toBe(REDIRECT_URI);
    expect(result.location?.searchParams.get('code')).toMatch(/.+/);
    expect(result.location?.searchParams.get('state')).toBe('xyz-state');
    expect(result.location?.searchParams.get('iss')).toBe(sandbox.baseUrl);
  });

  it('when the redirect URI carries a query, then it is kept next to the code', async () => {
    const result = await authorizeWith({ redirect_uri: 'http://127.0.0.1:8123/cb?session=abc' });
    expect(result.location?.searchParams.get('session')).toBe('abc');
    expect(result.location?.searchParams.get('code')).toMatch(/.+/);
  });

  it.each([
    'http://127.0.0.1:1/cb',
    'http://127.0.0.1:65000/any/path',
    'http://[::1]:9000/callback',
    'http://localhost:4321/callback',
    'http://127.0.0.1/callback',
  ])('when the loopback redirect URI is %s (any port), then it is accepted', async (redirectUri) => {
    const result = await authorizeWith({ redirect_uri: redirectUri });
    expect(result.status).toBe(302);
    expect(result.location?.searchParams.get('code')).toMatch(/.+/);
  });

  it('when no scope is requested, then every scope is granted', async () => {
    const tokens = await obtainTokens(sandbox);
    expect(tokens.scope.split(' ').sort()).toEqual(
      [
        'accounts:all',
        'accounts:read',
        'communications:read',
        'dunning:manage',
        'organizations:all',
        'organizations:read',
        'profile',
      ].sort(),
    );
  });

  it('when a subset of scopes is requested, then the token carries exactly that subset', async () => {
    const tokens = await obtainTokens(sandbox, { scope: 'accounts:read profile' });
    expect(tokens.scope).toBe('accounts:read profile');
  });

  it('when no state is sent, then the redirect carries none', async () => {
    const result = await authorizeWith({ state: undefined });
    expect(result.location?.searchParams.has('state')).toBe(false);
    expect(result.location?.searchParams.get('code')).toMatch(/.+/);
  });

  it('when login_hint names an existing user, then the token acts as that user', async () => {
    const tokens = await obtainTokens(sandbox, { login_hint: sandbox.seeded.otherUser.email });
    expect(sandbox.deps.tokens.verifyAccess(tokens.access_token)?.userId).toBe(sandbox.seeded.otherUser.id);
  });

  it('when no login_hint is sent, then the token acts as the first seeded user', async () => {
    const tokens = await obtainTokens(sandbox);
    expect(sandbox.deps.tokens.verifyAccess(tokens.access_token)?.userId).toBe(sandbox.seeded.user.id);
  });
});

describe('GET /api/oauth/authorize: client and redirect URI errors (no redirect)', () => {
  it('when the client_id is unknown, then 400 JSON invalid_client and no redirect', async () => {
    const result = await authorizeWith({ client_id: 'stranger' });
    expect(result.status).toBe(400);
    expect(result.location).toBeUndefined();
    expect(result.body.error).toBe('invalid_client');
  });

  it('when client_id is missing, then 400 invalid_request without redirect', async () => {
    const result = await authorizeWith({ client_id: undefined });
    expect(result.status).toBe(400);
    expect(result.location).toBeUndefined();
    expect(result.body.error).toBe('invalid_request');
  });

  it.each([
    'https://evil.example/callback',
    'http://evil.example:8080/callback',
    'https://127.0.0.1:8080/callback',
    'http://127.0.0.2:8080/callback',
    'http://127.0.0.1:8080/callback#fragment',
    'http://user:pw@127.0.0.1:8080/callback',
    'custom.scheme:/callback',
    'not a uri',
  ])(
    'when the redirect URI %s is not a plain loopback URI, then 400 and no redirect',
    async (redirectUri) => {
      const result = await authorizeWith({ redirect_uri: redirectUri });
      expect(result.status).toBe(400);
      expect(result.location).toBeUndefined();
      expect(result.body.error).toBe('invalid_request');
      expect(result.body.error_description).toContain('redirect_uri');
    },
  );

  it('when redirect_uri is missing, then 400 without redirect', async () => {
    const result = await authorizeWith({ redirect_uri: undefined });
    expect(result.status).toBe(400);
    expect(result.location).toBeUndefined();
  });
});

describe('GET /api/oauth/authorize: errors sent back to the redirect URI', () => {
  it('when code_challenge_method is plain, then it redirects with error=invalid_request and the state', async () => {
    const pkce = pkcePair();
    const result = await authorizeWith({ code_challenge: pkce.verifier, code_challenge_method: 'plain' });
    expect(result.status).toBe(302);
    expect(redirectError(result.location)).toEqual({
      origin: 'http://127.0.0.1:53682',
      error: 'invalid_request',
      state: 'xyz-state',
      code: null,
    });
    expect(result.location?.searchParams.get('error_description')).toContain('S256');
  });

  it('when code_challenge_method is missing (plain by default), then error=invalid_request', async () => {
    const result = await authorizeWith({ code_challenge_method: undefined });
    expect(redirectError(result.location).error).toBe('invalid_request');
  });

  it('when code_challenge is missing, then error=invalid_request (PKCE is required)', async () => {
    const result = await authorizeWith({ code_challenge: undefined });
    expect(redirectError(result.location)).toMatchObject({
      error: 'invalid_request',
      state: 'xyz-state',
      code: null,
    });
  });

  it('when code_challenge is too short, then error=invalid_request', async () => {
    const result = await authorizeWith({ code_challenge: 'abc' });
    expect(redirectError(result.location).error).toBe('invalid_request');
  });

  it('when response_type is token, then error=unsupported_response_type', async () => {
    const result = await authorizeWith({ response_type: 'token' });
    expect(redirectError(result.location)).toMatchObject({
      error: 'unsupported_response_type',
      state: 'xyz-state',
    });
  });

  it('when response_type is missing, then error=invalid_request', async () => {
    const result = await authorizeWith({ response_type: undefined });
    expect(redirectError(result.location).error).toBe('invalid_request');
  });

  it('when an unknown scope is requested, then error=invalid_scope', async () => {
    const result = await authorizeWith({ scope: 'accounts:read invoices:write' });
    expect(redirectError(result.location)).toMatchObject({
      error: 'invalid_scope',
      state: 'xyz-state',
      code: null,
    });
  });

  it('when login_hint names no sandbox user, then error=invalid_request', async () => {
    const result = await authorizeWith({ login_hint: 'nobody@nowhere.example' });
    expect(redirectError(result.location).error).toBe('invalid_request');
  });

  it.each(['scope', 'state', 'code_challenge'])(
    'when %s is repeated, then error=invalid_request',
    async (name) => {
      const url = new URL('/api/oauth/authorize', sandbox.baseUrl);
      for (const [k, v] of Object.entries(authorizeParams(sandbox, pkcePair(), { scope: 'profile' }))) {
        url.searchParams.set(k, v);
      }
      url.searchParams.append(name, url.searchParams.get(name)!);
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status).toBe(302);
      const location = new URL(response.headers.get('location')!);
      expect(location.searchParams.get('error')).toBe('invalid_request');
      expect(location.searchParams.get('code')).toBeNull();
    },
  );
});
