import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  exchange,
  newCode,
  obtainTokens,
  pkcePair,
  protectedCall,
  REDIRECT_URI,
  refreshCall,
  tokenCall,
} from './oauth-support.js';

const ACCESS_TTL_SECONDS = 300;
const clock = new ManualClock();
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({
    clock,
    accessTokenTtlSeconds: ACCESS_TTL_SECONDS,
    clientIds: ['receivables-sync', 'other-client'],
    // The budget is per IP and every test here calls from 127.0.0.1: oauth-rate-limit.test.ts tests the default.
    tokenRateLimit: { quota: 1000, windowSeconds: 60 },
  });
});
afterAll(async () => {
  await sandbox.close();
});

describe('authorization code grant', () => {
  it('when a code is exchanged with its verifier, then Bearer tokens come back and the access token calls the API', async () => {
    const { code, pkce } = await newCode(sandbox);
    const response = await exchange(sandbox, code, pkce.verifier);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.body).toMatchObject({ token_type: 'Bearer', expires_in: ACCESS_TTL_SECONDS });
    expect(response.body.access_token).toMatch(/.+/);
    expect(response.body.refresh_token).toMatch(/.+/);
    expect(response.body.scope).toContain('accounts:read');
    const api = await protectedCall(sandbox, response.body.access_token);
    expect(api.status).toBe(200);
  });

  it('when the token request is JSON, then it is accepted too', async () => {
    const { code, pkce } = await newCode(sandbox);
    const params = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: sandbox.clientId,
      code_verifier: pkce.verifier,
    };
    const response = await tokenCall(sandbox, params, true);
    expect(response.status).toBe(200);
    expect(response.body.token_type).toBe('Bearer');
  });

  it('when the verifier does not match the challenge, then 400 invalid_grant', async () => {
    const { code } = await newCode(sandbox);
    const response = await exchange(sandbox, code, pkcePair().verifier);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_grant');
    expect(response.body.error_description).toMatch(/.+/);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('when a code is exchanged twice, then the second exchange answers invalid_grant', async () => {
    const { code, pkce } = await newCode(sandbox);
    expect((await exchange(sandbox, code, pkce.verifier)).status).toBe(200);
    const again = await exchange(sandbox, code, pkce.verifier);
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('invalid_grant');
  });

  it('when an exchange with a wrong verifier failed, then the code is spent even with the right verifier', async () => {
    const { code, pkce } = await newCode(sandbox);
    await exchange(sandbox, code, pkcePair().verifier);
    const retry = await exchange(sandbox, code, pkce.verifier);
    expect(retry.body.error).toBe('invalid_grant');
  });

  it('when redirect_uri differs from the authorization request, then invalid_grant', async () => {
    const { code, pkce } = await newCode(sandbox);
    const response = await tokenCall(sandbox, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'http://127.0.0.1:53682/other',
      client_id: sandbox.clientId,
      code_verifier: pkce.verifier,
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_grant');
  });

  it('when another known client presents the code, then invalid_grant', async () => {
    const { code, pkce } = await newCode(sandbox);
    const response = await tokenCall(sandbox, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: 'other-client',
      code_verifier: pkce.verifier,
    });
    expect(response.body.error).toBe('invalid_grant');
  });

  it('when the code is older than its 60 s lifetime, then invalid_grant', async () => {
    const { code, pkce } = await newCode(sandbox);
    clock.advance(61_000);
    const response = await exchange(sandbox, code, pkce.verifier);
    expect(response.body.error).toBe('invalid_grant');
  });

  it('when the code is unknown, then invalid_grant', async () => {
    const response = await exchange(sandbox, 'sbx_code_made-up', pkcePair().verifier);
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_grant');
  });

  it.each(['code', 'redirect_uri', 'code_verifier'])(
    'when %s is missing, then 400 invalid_request',
    async (name) => {
      const { code, pkce } = await newCode(sandbox);
      const params: Record<string, string> = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT_URI,
        client_id: sandbox.clientId,
        code_verifier: pkce.verifier,
      };
      delete params[name];
      const response = await tokenCall(sandbox, params);
      expect(response.status).toBe(400);
      expect(response.body.error).toBe('invalid_request');
      expect(response.body.error_description).toContain(name);
    },
  );

  it('when the verifier is shorter than 43 characters, then invalid_request', async () => {
    const { code } = await newCode(sandbox);
    const response = await exchange(sandbox, code, 'short');
    expect(response.body.error).toBe('invalid_request');
  });
});

describe('token request errors', () => {
  it('when the client_id is unknown, then 401 invalid_client', async () => {
    const response = await tokenCall(sandbox, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'nope',
    });
    expect(response.status).toBe(401);
    expect(response.body.error).toBe('invalid_client');
  });

  it('when client_id is missing, then 400 invalid_request', async () => {
    const response = await tokenCall(sandbox, { grant_type: 'refresh_token', refresh_token: 'x' });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_request');
  });

  it('when the grant type is client_credentials, then 400 unsupported_grant_type', async () => {
    const response = await tokenCall(sandbox, {
      grant_type: 'client_credentials',
      client_id: sandbox.clientId,
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('unsupported_grant_type');
  });

  it('when grant_type is missing, then 400 invalid_request', async () => {
    const response = await tokenCall(sandbox, { client_id: sandbox.clientId });
    expect(response.body.error).toBe('invalid_request');
  });

  it('when the body is not form nor JSON, then 400 invalid_request in OAuth shape', async () => {
    const response = await fetch(new URL('/api/oauth/token', sandbox.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'grant_type=refresh_token',
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toBe('invalid_request');
  });

  it('when a parameter is repeated, then 400 invalid_request', async () => {
    const response = await fetch(new URL('/api/oauth/token', sandbox.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${sandbox.clientId}`,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toBe('invalid_request');
  });
});

describe('refresh token grant', () => {
  it('when a refresh token is used, then new access and refresh tokens come back and the new access token works', async () => {
    const first = await obtainTokens(sandbox, { scope: 'accounts:read' });
    const response = await refreshCall(sandbox, first.refresh_token);
    expect(response.status).toBe(200);
    expect(response.body.access_token).not.toBe(first.access_token);
    expect(response.body.refresh_token).not.toBe(first.refresh_token);
    expect(response.body).toMatchObject({
      token_type: 'Bearer',
      expires_in: ACCESS_TTL_SECONDS,
      scope: 'accounts:read',
    });
    expect((await protectedCall(sandbox, response.body.access_token)).status).toBe(200);
  });

  it('when a rotated refresh token is reused, then invalid_grant and the whole family is revoked', async () => {
    const first = await obtainTokens(sandbox);
    const second = (await refreshCall(sandbox, first.refresh_token)).body;
    expect((await protectedCall(sandbox, second.access_token)).status).toBe(200);

    const reuse = await refreshCall(sandbox, first.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    const newest = await protectedCall(sandbox, second.access_token);
    expect(newest.status).toBe(401);
    expect((await refreshCall(sandbox, second.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('when a family is revoked, then other families of the same user keep working', async () => {
    const victim = await obtainTokens(sandbox);
    const bystander = await obtainTokens(sandbox);
    await refreshCall(sandbox, victim.refresh_token);
    await refreshCall(sandbox, victim.refresh_token);
    expect((await protectedCall(sandbox, bystander.access_token)).status).toBe(200);
  });

  it('when the refresh token is unknown, then invalid_grant', async () => {
    const response = await refreshCall(sandbox, 'sbx_rt_made-up');
    expect(response.status).toBe(400);
    expect(response.body.error).toBe('invalid_grant');
  });

  it('when another client presents the refresh token, then invalid_grant', async () => {
    const tokens = await obtainTokens(sandbox);
    const response = await tokenCall(sandbox, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: 'other-client',
    });
    expect(response.body.error).toBe('invalid_grant');
  });

  it('when refresh_token is missing, then invalid_request', async () => {
    const response = await tokenCall(sandbox, { grant_type: 'refresh_token', client_id: sandbox.clientId });
    expect(response.body.error).toBe('invalid_request');
  });
});

describe('access token lifetime', () => {
  it('when the access token has expired, then the API answers 401 and a refresh gives a working token', async () => {
    const tokens = await obtainTokens(sandbox);
    clock.advance((ACCESS_TTL_SECONDS - 1) * 1000);
    expect((await protectedCall(sandbox, tokens.access_token)).status).toBe(200);
    clock.advance(1000);
    const expired = await protectedCall(sandbox, tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('resource_metadata=');
    const refreshed = await refreshCall(sandbox, tokens.refresh_token);
    expect((await protectedCall(sandbox, refreshed.body.access_token)).status).toBe(200);
  });
});
