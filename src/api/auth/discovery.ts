import * as oauth from 'oauth4webapi';
import type { Logger } from '../../logging/logger.js';
import { API_PREFIX, apiBaseOf } from '../requests.js';
import { DiscoveryError } from './auth-errors.js';

/** The spec's token endpoint: the refresh grant needs no discovery to find it. */
export const SPEC_TOKEN_PATH = '/api/oauth/token';

/**
 * Where the refresh grant goes: `auth.tokenEndpoint` when set, else the spec's
 * `POST {base_url}/api/oauth/token`; the issuer is the base URL (the spec's authorization server).
 */
export function refreshEndpointOf(
  baseUrl: string,
  tokenEndpoint?: string | undefined,
): { issuer: string; tokenEndpoint: string } {
  const base = baseUrl.replace(/\/+$/, '');
  return { issuer: base, tokenEndpoint: tokenEndpoint ?? `${base}${SPEC_TOKEN_PATH}` };
}

/**
 * How the `resource` of the protected resource metadata relates to the API (RFC 9728 §3.3 wants
 * it to be the resource asked for; servers name `{base_url}`, which RFC 9728 derives from the
 * well-known address the spec gives, or `{base_url}/api/public/v1`):
 * - `api`: `{base_url}/api/public/v1`; `base`: `{base_url}`; `prefix`: another prefix of
 *   `{base_url}/api/public/v1` on the same origin (`{base_url}/api`): all accepted;
 * - null: anything else.
 */
export function resourceFormOf(resource: string, baseUrl: string): 'api' | 'base' | 'prefix' | null {
  const trim = (url: string) => url.replace(/\/+$/, '');
  const found = trim(resource);
  const api = apiBaseOf(baseUrl);
  if (found === api) return 'api';
  if (found === trim(baseUrl)) return 'base';
  try {
    const at = new URL(found);
    const apiUrl = new URL(api);
    if (at.origin === apiUrl.origin && (apiUrl.pathname.startsWith(`${at.pathname}/`) || at.pathname === '/'))
      return 'prefix';
  } catch {
    return null;
  }
  return null;
}

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
  /** The `resource` the metadata named, and how it relates to the API (null: another, see warnings). */
  resourceNamed: { value: string; form: 'api' | 'base' | 'prefix' | null };
  /** What was assumed rather than confirmed (shown by `doctor`, logged as warnings). */
  warnings: string[];
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
 * 2. that protected resource metadata (RFC 9728) names the API as its `resource` (see
 *    `resourceFormOf` for the forms accepted; another is a warning when the API's own origin serves
 *    the document, and refused otherwise), and lists the authorization servers;
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
  const metadata = await readResourceMetadata(metadataResponse, resource);
  const warnings: string[] = [];
  const form = resourceFormOf(metadata.resource, props.baseUrl);
  if (form === null) {
    // Served by the API's own origin, the document is as trustworthy as the API itself: its odd
    // `resource` is a warning. From anywhere else, RFC 9728 §3.3 applies: it must not be used.
    const servedBy = new URL(metadataResponse.url || resource).origin;
    if (servedBy !== resourceUrl.origin) {
      throw new DiscoveryError(
        `the protected resource metadata at ${metadataResponse.url} (another origin) is for another resource, ${metadata.resource}, not ${resource}: refusing to use it`,
      );
    }
    warnings.push(
      `the protected resource metadata names "${metadata.resource}" as its resource, neither ${props.baseUrl.replace(/\/+$/, '')} nor ${resource}; used, as the API's own origin serves it`,
    );
  }
  for (const warning of warnings) props.log?.warn({ resource, named: metadata.resource }, warning);
  const issuer = metadata.authorization_servers?.[0];
  if (!issuer)
    throw new DiscoveryError(`the protected resource metadata of ${resource} names no authorization server`);
  const authorizationServer = await fetchAuthorizationServer(issuer, fetchImpl, props.signal);
  const scopesSupported = metadata.scopes_supported ?? authorizationServer.scopes_supported ?? [];
  props.log?.debug({ resource, issuer: authorizationServer.issuer }, 'authorization server discovered');
  return {
    resource,
    resourceNamed: { value: metadata.resource, form },
    warnings,
    authorizationServer,
    scopesSupported,
  };
}

/** RFC 9728 protected resource metadata, as far as discovery needs it. */
interface ResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  scopes_supported?: string[];
}

/** The metadata document's JSON, checked for the members discovery uses. */
async function readResourceMetadata(response: Response, resource: string): Promise<ResourceMetadata> {
  if (response.status !== 200) {
    throw new DiscoveryError(
      `the protected resource metadata of ${resource} at ${response.url} answered ${response.status}, not 200`,
    );
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (cause) {
    throw new DiscoveryError(`unusable protected resource metadata at ${response.url}: not JSON`, { cause });
  }
  const doc = body as Partial<Record<keyof ResourceMetadata, unknown>> | null;
  const strings = (value: unknown) => Array.isArray(value) && value.every((v) => typeof v === 'string');
  if (
    doc === null ||
    typeof doc !== 'object' ||
    typeof doc.resource !== 'string' ||
    (doc.authorization_servers !== undefined && !strings(doc.authorization_servers)) ||
    (doc.scopes_supported !== undefined && !strings(doc.scopes_supported))
  ) {
    throw new DiscoveryError(
      `unusable protected resource metadata at ${response.url}: "resource" must be a string, "authorization_servers" and "scopes_supported" arrays of strings`,
    );
  }
  return doc as ResourceMetadata;
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
    const get = (url: string) =>
      fetchImpl(url, {
        headers: { accept: 'application/json' },
        redirect: 'manual',
        ...(signal ? { signal } : {}),
      });
    if (pointer) return await get(pointer);
    // No pointer: the spec's address, `{base_url}/.well-known/oauth-protected-resource`, then the
    // one RFC 9728 §3.1 derives from the resource (the well-known segment before its path).
    const base = resource.slice(0, -API_PREFIX.length);
    const spec = await get(`${base}/.well-known/oauth-protected-resource`);
    if (spec.status !== 404) return spec;
    await spec.body?.cancel();
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
