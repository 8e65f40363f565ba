import * as oauth from 'oauth4webapi';
import type { Logger } from '../../logging/logger.js';
import { DiscoveryError } from './auth-errors.js';

export const API_PREFIX = '/api/public/v1';

/** `{base_url}/api/public/v1`, the Public API's resource identifier. */
export const apiBaseOf = (baseUrl: string) => `${baseUrl.replace(/\/+$/, '')}${API_PREFIX}`;

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * oauth4webapi options for requests to `url`: the injected fetch, and plain http allowed when the
 * configured base URL is http (the local sandbox, a compose network). oauth4webapi refuses http
 * unless told otherwise; the base URL's scheme is the user's explicit choice.
 */
export function oauthHttpOptions(
  url: string,
  fetchImpl: typeof fetch,
  signal?: AbortSignal,
): { [oauth.customFetch]: typeof fetch; [oauth.allowInsecureRequests]?: boolean; signal?: AbortSignal } {
  return {
    [oauth.customFetch]: fetchImpl,
    ...(new URL(url).protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}),
    ...(signal ? { signal } : {}),
  };
}

/** What discovery found: the checked resource and its authorization server's metadata. */
export interface DiscoveredServer {
  /** The API's resource identifier, checked against the protected resource metadata. */
  resource: string;
  authorizationServer: oauth.AuthorizationServer;
  /** `scopes_supported` of the resource (else of the authorization server). */
  scopesSupported: string[];
}

export interface DiscoveryProps {
  baseUrl: string;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  log?: Logger;
}

/**
 * Finds the authorization server the way a client that knows only `{base_url}` should:
 * 1. an unauthenticated call to a protected path answers 401 with
 *    `WWW-Authenticate: Bearer resource_metadata="..."` (spec Authentication 5);
 * 2. that protected resource metadata (RFC 9728) must name our API as its `resource` (§3.3: else
 *    its content must not be used), and lists the authorization servers;
 * 3. the first one's metadata (RFC 8414) must repeat its issuer and support PKCE S256.
 */
export async function discover(props: DiscoveryProps): Promise<DiscoveredServer> {
  const fetchImpl = props.fetch ?? fetch;
  const resource = apiBaseOf(props.baseUrl);
  const resourceUrl = new URL(resource);
  if (resourceUrl.protocol === 'http:' && !LOOPBACK.has(resourceUrl.hostname)) {
    props.log?.warn({ baseUrl: props.baseUrl }, 'the API base URL is plain http: tokens travel unencrypted');
  }
  const metadataResponse = await fetchResourceMetadata(resource, fetchImpl, props.signal);
  let metadata: oauth.ResourceServer;
  try {
    metadata = await oauth.processResourceDiscoveryResponse(resourceUrl, metadataResponse);
  } catch (cause) {
    const mismatch =
      cause instanceof oauth.OperationProcessingError && cause.code === oauth.JSON_ATTRIBUTE_COMPARISON;
    throw new DiscoveryError(
      mismatch
        ? `the protected resource metadata at ${metadataResponse.url} is for another resource, not ${resource}: refusing to use it`
        : `unusable protected resource metadata at ${metadataResponse.url}: ${(cause as Error).message}`,
      { cause },
    );
  }
  const issuer = metadata.authorization_servers?.[0];
  if (!issuer)
    throw new DiscoveryError(`the protected resource metadata of ${resource} names no authorization server`);
  const authorizationServer = await fetchAuthorizationServer(issuer, fetchImpl, props.signal);
  const scopesSupported = metadata.scopes_supported ?? authorizationServer.scopes_supported ?? [];
  props.log?.debug({ resource, issuer: authorizationServer.issuer }, 'authorization server discovered');
  return { resource, authorizationServer, scopesSupported };
}

/** Step 1: the 401's `resource_metadata`, else the RFC 9728 well-known address of the resource. */
async function fetchResourceMetadata(resource: string, fetchImpl: typeof fetch, signal?: AbortSignal) {
  let challenge: Response;
  try {
    challenge = await fetchImpl(`${resource}/organizations`, {
      redirect: 'manual',
      ...(signal ? { signal } : {}),
    });
    await challenge.body?.cancel();
  } catch (cause) {
    throw new DiscoveryError(`cannot reach ${resource}: ${(cause as Error).message}`, {
      retryable: true,
      cause,
    });
  }
  if (challenge.status !== 401) {
    throw new DiscoveryError(
      `an unauthenticated GET ${resource}/organizations answered ${challenge.status}, not 401: is ${resource} the Receivables Public API?`,
    );
  }
  const pointer = bearerChallengeParams(challenge.headers.get('www-authenticate')).resource_metadata;
  try {
    if (pointer)
      return await fetchImpl(pointer, {
        headers: { accept: 'application/json' },
        redirect: 'manual',
        ...(signal ? { signal } : {}),
      });
    return await oauth.resourceDiscoveryRequest(
      new URL(resource),
      oauthHttpOptions(resource, fetchImpl, signal),
    );
  } catch (cause) {
    throw new DiscoveryError(
      `cannot fetch the protected resource metadata of ${resource}: ${(cause as Error).message}`,
      {
        retryable: true,
        cause,
      },
    );
  }
}

/** Step 3: RFC 8414 metadata, issuer checked by oauth4webapi, S256 required (OAuth 2.1). */
async function fetchAuthorizationServer(issuer: string, fetchImpl: typeof fetch, signal?: AbortSignal) {
  let issuerUrl: URL;
  try {
    issuerUrl = new URL(issuer);
  } catch (cause) {
    throw new DiscoveryError(`the authorization server "${issuer}" is not a URL`, { cause });
  }
  let as: oauth.AuthorizationServer;
  try {
    const options = { ...oauthHttpOptions(issuer, fetchImpl, signal), algorithm: 'oauth2' as const };
    as = await oauth.processDiscoveryResponse(issuerUrl, await oauth.discoveryRequest(issuerUrl, options));
  } catch (cause) {
    throw new DiscoveryError(
      `unusable authorization server metadata for ${issuer}: ${(cause as Error).message}`,
      { cause },
    );
  }
  if (!as.code_challenge_methods_supported?.includes('S256')) {
    throw new DiscoveryError(
      `the authorization server ${issuer} does not announce PKCE S256 (code_challenge_methods_supported)`,
    );
  }
  if (!as.token_endpoint || !as.authorization_endpoint) {
    throw new DiscoveryError(
      `the authorization server ${issuer} announces no authorization or token endpoint`,
    );
  }
  return as;
}

/**
 * The auth-params of the `Bearer` challenge of a WWW-Authenticate header (RFC 9110 §11.6.1):
 * `Bearer resource_metadata="https://...", error="invalid_token"`. Names are lowercased.
 */
export function bearerChallengeParams(header: string | null): Record<string, string> {
  const params: Record<string, string> = {};
  if (!header) return params;
  const start = /(?:^|,)\s*Bearer(?:\s+|$)/i.exec(header);
  if (!start) return params;
  const rest = header.slice(start.index + start[0].length);
  const param = /\s*([A-Za-z0-9!#$%&'*+.^_`|~-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^\s,]+)\s*(,|$)/y;
  for (let m = param.exec(rest); m; m = param.exec(rest)) {
    const name = m[1]!.toLowerCase();
    params[name] = m[3] === undefined ? m[2]! : m[3].replace(/\\(.)/g, '$1');
    // A token not followed by "=" starts the next challenge: stop there.
    if (m[4] === '') break;
  }
  return params;
}
