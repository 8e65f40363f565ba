import { createHash, randomBytes } from 'node:crypto';
import type { TestSandbox } from '../../support/sandbox.js';

/** Shared helpers of the oauth*.test.ts files: a PKCE client driving the sandbox over HTTP. */

export const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkcePair(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export interface AuthorizeResult {
  status: number;
  /** The redirect target, when the server redirected. */
  location: URL | undefined;
  body: any;
}

/** GET /api/oauth/authorize without following the redirect. */
export async function authorize(sandbox: TestSandbox, params: Record<string, string | undefined>) {
  const url = new URL('/api/oauth/authorize', sandbox.baseUrl);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, v);
  const response = await fetch(url, { redirect: 'manual' });
  const location = response.headers.get('location');
  const text = await response.text();
  return {
    status: response.status,
    location: location ? new URL(location) : undefined,
    body: text && !location ? JSON.parse(text) : undefined,
  } satisfies AuthorizeResult;
}

/** The parameters of a valid authorization request for `pkce`. */
export const authorizeParams = (
  sandbox: TestSandbox,
  pkce: Pkce,
  extra: Record<string, string | undefined> = {},
) => ({
  response_type: 'code',
  client_id: sandbox.clientId,
  redirect_uri: REDIRECT_URI,
  code_challenge: pkce.challenge,
  code_challenge_method: 'S256',
  state: 'xyz-state',
  ...extra,
});

/** A fresh authorization code (and its PKCE pair) for the sandbox's client. */
export async function newCode(sandbox: TestSandbox, extra: Record<string, string | undefined> = {}) {
  const pkce = pkcePair();
  const result = await authorize(sandbox, authorizeParams(sandbox, pkce, extra));
  const code = result.location?.searchParams.get('code');
  if (!code) throw new Error(`authorize did not give a code: ${result.status} ${result.location}`);
  return { code, pkce };
}

export interface TokenResult {
  status: number;
  headers: Headers;
  body: any;
}

/** POST /api/oauth/token, form-encoded unless `json` is set. */
export async function tokenCall(sandbox: TestSandbox, params: Record<string, string>, json = false) {
  const response = await fetch(new URL('/api/oauth/token', sandbox.baseUrl), {
    method: 'POST',
    headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded' },
    body: json ? JSON.stringify(params) : new URLSearchParams(params).toString(),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  } satisfies TokenResult;
}

/** The authorization code exchange of `newCode`'s result. */
export const exchange = (sandbox: TestSandbox, code: string, verifier: string) =>
  tokenCall(sandbox, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT_URI,
    client_id: sandbox.clientId,
    code_verifier: verifier,
  });

export const refreshCall = (sandbox: TestSandbox, refreshToken: string) =>
  tokenCall(sandbox, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: sandbox.clientId,
  });

/** The whole flow: authorize, then exchange; returns the token response body. */
export async function obtainTokens(sandbox: TestSandbox, extra: Record<string, string | undefined> = {}) {
  const { code, pkce } = await newCode(sandbox, extra);
  const response = await exchange(sandbox, code, pkce.verifier);
  if (response.status !== 200) throw new Error(`token exchange failed: ${JSON.stringify(response.body)}`);
  return response.body as { access_token: string; refresh_token: string; scope: string; expires_in: number };
}

/** A protected call any token with a scope passes: POST /mcp (accepts every scope). */
export const protectedCall = (sandbox: TestSandbox, token: string) =>
  sandbox.call('POST', '/mcp', { token, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
