import { describe, expect, it } from 'vitest';
import { DiscoveryError } from '../../../src/api/auth/auth-errors.js';
import { bearerChallengeParams, discover } from '../../../src/api/auth/discovery.js';

const BASE = 'https://api.example.test';
const json = (body: unknown) =>
  new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

/** A fake server: the 401 challenge, RFC 9728 and RFC 8414 documents, each overridable. */
function fakeFetch(over: { challenge?: Response; resource?: unknown; as?: unknown } = {}): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url === `${BASE}/api/public/v1/organizations`) {
      return (
        over.challenge ??
        new Response('{}', {
          status: 401,
          headers: {
            'www-authenticate': `Bearer resource_metadata="${BASE}/.well-known/oauth-protected-resource"`,
          },
        })
      );
    }
    if (
      url === `${BASE}/.well-known/oauth-protected-resource` ||
      url === `${BASE}/.well-known/oauth-protected-resource/api/public/v1`
    ) {
      return json(over.resource ?? { resource: `${BASE}/api/public/v1`, authorization_servers: [BASE] });
    }
    if (url === `${BASE}/.well-known/oauth-authorization-server`) {
      return json(
        over.as ?? {
          issuer: BASE,
          authorization_endpoint: `${BASE}/api/oauth/authorize`,
          token_endpoint: `${BASE}/api/oauth/token`,
          code_challenge_methods_supported: ['S256'],
        },
      );
    }
    return new Response('not found', { status: 404 });
  }) as typeof fetch;
}

describe('bearerChallengeParams', () => {
  it('when the header has quoted and token params, then both are read', () => {
    expect(bearerChallengeParams('Bearer resource_metadata="https://x/y", error=invalid_token')).toEqual({
      resource_metadata: 'https://x/y',
      error: 'invalid_token',
    });
  });
  it('when the Bearer challenge follows another, then its params are read, not the other one', () => {
    expect(bearerChallengeParams('Basic realm="a", Bearer realm="b", error="x\\"y"')).toEqual({
      realm: 'b',
      error: 'x"y',
    });
  });
  it('when another challenge follows, then its params are not taken', () => {
    expect(bearerChallengeParams('Bearer realm="b", DPoP algs="ES256"')).toEqual({ realm: 'b' });
  });
  it('when there is no Bearer challenge, then nothing', () => {
    expect(bearerChallengeParams('Basic realm="a"')).toEqual({});
    expect(bearerChallengeParams(null)).toEqual({});
  });
});

describe('discover', () => {
  it('when every document is consistent, then the authorization server is returned', async () => {
    const found = await discover({ baseUrl: `${BASE}/`, fetch: fakeFetch() });
    expect(found.resource).toBe(`${BASE}/api/public/v1`);
    expect(found.authorizationServer.token_endpoint).toBe(`${BASE}/api/oauth/token`);
  });

  it.each([
    ['{base_url}/api/public/v1', `${BASE}/api/public/v1`, 'api'],
    ['{base_url} (what RFC 9728 derives from the spec’s well-known address)', BASE, 'base'],
    ['{base_url}/ with a trailing slash', `${BASE}/`, 'base'],
    ['{base_url}/api, a prefix of the API on its origin', `${BASE}/api`, 'prefix'],
  ])('when the resource metadata names %s, then it is accepted without a warning', async (_, named, form) => {
    const resource = { resource: named, authorization_servers: [BASE] };
    const found = await discover({ baseUrl: BASE, fetch: fakeFetch({ resource }) });
    expect(found.resourceNamed).toEqual({ value: named, form });
    expect(found.warnings).toEqual([]);
    expect(found.authorizationServer.token_endpoint).toBe(`${BASE}/api/oauth/token`);
  });

  it('when the API’s own origin serves metadata naming another resource, then it is used, with a warning', async () => {
    const resource = { resource: 'https://evil.example.test/api/public/v1', authorization_servers: [BASE] };
    const found = await discover({ baseUrl: BASE, fetch: fakeFetch({ resource }) });
    expect(found.resourceNamed.form).toBe(null);
    expect(found.warnings).toEqual([
      expect.stringMatching(/names "https:\/\/evil.example.test\/api\/public\/v1"/),
    ]);
  });

  it('when the 401 points to metadata on another origin that names another resource, then it is refused (RFC 9728 §3.3)', async () => {
    const challenge = new Response('{}', {
      status: 401,
      headers: { 'www-authenticate': 'Bearer resource_metadata="https://evil.example.test/meta"' },
    });
    const inner = fakeFetch({ challenge });
    const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url === 'https://evil.example.test/meta') {
        const response = json({ resource: 'https://evil.example.test', authorization_servers: [BASE] });
        Object.defineProperty(response, 'url', { value: url });
        return response;
      }
      return inner(input, init);
    }) as typeof fetch;
    await expect(discover({ baseUrl: BASE, fetch: fetchImpl })).rejects.toThrow(/another origin.*refusing/);
  });

  it('when the 401 has no pointer, then the spec’s {base_url}/.well-known/oauth-protected-resource is read first', async () => {
    const seen: string[] = [];
    const challenge = new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    const inner = fakeFetch({ challenge });
    const fetchImpl = (async (input: string | URL | Request, init?: RequestInit) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return inner(input, init);
    }) as typeof fetch;
    await discover({ baseUrl: BASE, fetch: fetchImpl });
    expect(seen).toContain(`${BASE}/.well-known/oauth-protected-resource`);
    expect(seen).not.toContain(`${BASE}/.well-known/oauth-protected-resource/api/public/v1`);
  });

  it('when the 401 has no resource_metadata, then the RFC 9728 well-known address of the resource is used', async () => {
    const challenge = new Response('{}', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
    const found = await discover({ baseUrl: BASE, fetch: fakeFetch({ challenge }) });
    expect(found.authorizationServer.issuer).toBe(BASE);
  });

  it('when the protected path does not answer 401, then the error says the base URL looks wrong', async () => {
    const challenge = new Response('<html>', { status: 200 });
    await expect(discover({ baseUrl: BASE, fetch: fakeFetch({ challenge }) })).rejects.toThrow(/not 401/);
  });

  it('when the authorization server does not support S256, then discovery fails', async () => {
    const as = {
      issuer: BASE,
      authorization_endpoint: `${BASE}/a`,
      token_endpoint: `${BASE}/t`,
      code_challenge_methods_supported: ['plain'],
    };
    await expect(discover({ baseUrl: BASE, fetch: fakeFetch({ as }) })).rejects.toThrow(/S256/);
  });

  it('when the authorization server metadata names another issuer, then discovery fails', async () => {
    const as = {
      issuer: 'https://other.test',
      authorization_endpoint: `${BASE}/a`,
      token_endpoint: `${BASE}/t`,
      code_challenge_methods_supported: ['S256'],
    };
    await expect(discover({ baseUrl: BASE, fetch: fakeFetch({ as }) })).rejects.toThrow(DiscoveryError);
  });

  it('when the resource names no authorization server, then discovery fails', async () => {
    const resource = { resource: `${BASE}/api/public/v1`, authorization_servers: [] };
    await expect(discover({ baseUrl: BASE, fetch: fakeFetch({ resource }) })).rejects.toThrow(
      /no authorization server/,
    );
  });
});
