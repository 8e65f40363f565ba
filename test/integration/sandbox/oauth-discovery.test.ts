import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../../../src/sandbox/oauth/scopes.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { obtainTokens, protectedCall } from './oauth-support.js';

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(async () => {
  await sandbox.close();
});

const getJson = async (path: string) => {
  const response = await fetch(new URL(path, sandbox.baseUrl));
  return { status: response.status, body: (await response.json()) as any };
};

describe('OAuth discovery documents', () => {
  it('when the protected resource metadata is fetched, then it names the API resource and its authorization server', async () => {
    const { status, body } = await getJson('/.well-known/oauth-protected-resource');
    expect(status).toBe(200);
    expect(body.resource).toBe(`${sandbox.baseUrl}/api/public/v1`);
    expect(body.authorization_servers).toEqual([sandbox.baseUrl]);
    expect(body.scopes_supported).toEqual([...ALL_SCOPES]);
    expect(body.bearer_methods_supported).toEqual(['header']);
  });

  it('when the metadata is fetched at the RFC 9728 path-suffixed address, then the same document answers', async () => {
    const { status, body } = await getJson('/.well-known/oauth-protected-resource/api/public/v1');
    expect(status).toBe(200);
    expect(body.resource).toBe(`${sandbox.baseUrl}/api/public/v1`);
  });

  it('when the authorization server metadata is fetched, then it advertises code + PKCE S256 for public clients', async () => {
    const { status, body } = await getJson('/.well-known/oauth-authorization-server');
    expect(status).toBe(200);
    expect(body).toMatchObject({
      issuer: sandbox.baseUrl,
      authorization_endpoint: `${sandbox.baseUrl}/api/oauth/authorize`,
      token_endpoint: `${sandbox.baseUrl}/api/oauth/token`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [...ALL_SCOPES],
    });
  });

  it('when the discovery chain is followed from a 401, then it reaches the authorization server metadata', async () => {
    const unauthorized = await sandbox.call('GET', '/organizations', { token: null });
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(
      unauthorized.headers.get('www-authenticate') ?? '',
    )?.[1];
    const resource = (await (await fetch(metadataUrl!)).json()) as any;
    const server = await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`);
    expect(server.status).toBe(200);
  });
});

describe('401 on protected paths', () => {
  const expectedChallenge = () =>
    `Bearer resource_metadata="${sandbox.baseUrl}/.well-known/oauth-protected-resource"`;

  it('when no token is sent, then 401 carries WWW-Authenticate with resource_metadata and the rate-limit policy', async () => {
    const response = await sandbox.call('GET', '/accounts', {
      token: null,
      query: { organizationId: sandbox.organizationId },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(expectedChallenge());
    expect(response.headers.get('ratelimit-policy')).toBe('"public-api";q=300;w=60');
    expect(response.headers.get('ratelimit')).toBeNull();
    expect(response.body).toMatchObject({
      code: 'UNAUTHORIZED',
      path: '/api/public/v1/accounts',
      method: 'GET',
    });
  });

  it('when an unknown token is sent, then 401 carries the same WWW-Authenticate challenge', async () => {
    const response = await sandbox.call('GET', '/organizations', { token: 'sbx_at_not-a-real-token' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(expectedChallenge());
    expect(response.headers.get('ratelimit-policy')).toBe('"public-api";q=300;w=60');
  });

  it('when the Authorization header is not a Bearer token, then 401', async () => {
    const response = await sandbox.call('GET', '/organizations', {
      token: null,
      headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(expectedChallenge());
  });

  it('when POST /mcp is called without a token, then 401 with the challenge and the rate-limit policy', async () => {
    const response = await sandbox.call('POST', '/mcp', { token: null, body: { jsonrpc: '2.0', id: 1 } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(expectedChallenge());
    expect(response.headers.get('ratelimit-policy')).toBe('"public-api";q=300;w=60');
  });

  it('when GET /status is called without a token, then it answers 200', async () => {
    const response = await sandbox.call('GET', '/status', { token: null });
    expect(response.status).toBe(200);
  });
});

describe('403 on missing scope', () => {
  it('when a token without any scope calls POST /mcp, then 403', async () => {
    const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: [] });
    const response = await protectedCall(sandbox, accessToken);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it('when a token with only profile calls GET /aging-balance (accounts:read), then 403', async () => {
    const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['profile'] });
    const query = { organizationId: sandbox.organizationId };
    const response = await sandbox.call('GET', '/aging-balance', { token: accessToken, query });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('when a token with organizations:all calls an accounts:read endpoint, then 403 (no cross-family cover)', async () => {
    const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:all'] });
    const query = { organizationId: sandbox.organizationId };
    const response = await sandbox.call('GET', '/aging-balance', { token: accessToken, query });
    expect(response.status).toBe(403);
  });

  it.each(['accounts:read', 'accounts:all'])(
    'when a token with only %s calls GET /aging-balance, then the scope check passes',
    async (scope) => {
      const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: [scope] });
      const query = { organizationId: sandbox.organizationId };
      const response = await sandbox.call('GET', '/aging-balance', { token: accessToken, query });
      expect(response.status).toBe(200);
    },
  );

  it('when a token obtained with a narrower scope calls outside it, then 403', async () => {
    const tokens = await obtainTokens(sandbox, { scope: 'profile' });
    const query = { organizationId: sandbox.organizationId };
    const response = await sandbox.call('GET', '/aging-balance', { token: tokens.access_token, query });
    expect(response.status).toBe(403);
  });
});
