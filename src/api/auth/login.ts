import type { Readable } from 'node:stream';
import * as oauth from 'oauth4webapi';
import type { Logger } from '../../logging/logger.js';
import { apiBaseOf } from '../requests.js';
import { LoginFlowError } from './auth-errors.js';
import { type DiscoveredServer, discover } from './discovery.js';
import { readPastedRedirect, startLoopbackReceiver } from './loopback-receiver.js';
import type { RefreshLock } from './refresh-lock.js';
import type { TokenEndpointClient } from './token-endpoint.js';
import type { CredentialStore, StoredCredentials } from './token-storage.js';

export interface LoginProps {
  baseUrl: string;
  clientId: string;
  /** Scopes to ask for; none = the server's default (the sandbox grants every scope). */
  scopes?: readonly string[];
  store: CredentialStore;
  tokenEndpoint: TokenEndpointClient;
  /** The refresh lock of `store`: the new credentials must not be overwritten by a running refresh. */
  lock?: RefreshLock;
  /** Shows the authorization URL to the user (the CLI prints it on stderr); tests follow it. */
  onAuthorizationUrl: (url: string) => void | Promise<void>;
  /** `--paste`: where the user pastes the address the browser was redirected to. */
  pastedRedirects?: Readable;
  /** Tells the user a pasted line was ignored, and why. */
  onPasteIgnored?: (why: string) => void;
  /**
   * `auth.authorizationEndpoint` / `auth.tokenEndpoint`: what discovery would find, for a server
   * without it (both set: no discovery at all), or to correct it.
   */
  endpoints?: { authorization?: string | undefined; token?: string | undefined };
  fetch?: typeof fetch;
  log?: Logger;
  /** How long to wait for the redirect. Default 5 minutes. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * `auth login`: discovery, then Authorization Code + PKCE (S256) + `state` through a loopback
 * redirect on 127.0.0.1 (RFC 8252), or a pasted redirect address on a headless server; the code is
 * exchanged and the credentials stored. Neither the code nor the verifier is logged or kept.
 */
export async function login(props: LoginProps): Promise<StoredCredentials> {
  // Before the user signs in: a login whose tokens cannot be stored is wasted, and its code spent.
  await props.store.checkWritable();
  const discovered = await serverOf(props);
  const as = discovered.authorizationServer;
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const codeChallenge = await oauth.calculatePKCECodeChallenge(codeVerifier);
  const state = oauth.generateRandomState();
  const receiver = await startLoopbackReceiver({
    expectedState: state,
    timeoutMs: props.timeoutMs ?? 5 * 60_000,
    ...(props.signal ? { signal: props.signal } : {}),
  });
  const paste = props.pastedRedirects
    ? readPastedRedirect(props.pastedRedirects, state, props.onPasteIgnored ?? (() => {}))
    : undefined;
  let redirected: URLSearchParams;
  try {
    const url = authorizationUrl(discovered, props, receiver.redirectUri, state, codeChallenge);
    props.log?.info(
      { issuer: as.issuer, clientId: props.clientId, redirectUri: receiver.redirectUri },
      'waiting for the authorization redirect',
    );
    await props.onAuthorizationUrl(url);
    redirected = await (paste ? Promise.race([receiver.result, paste.result]) : receiver.result);
  } finally {
    paste?.close();
    await receiver.close();
  }
  const client = { client_id: props.clientId };
  let callbackParameters: URLSearchParams;
  try {
    callbackParameters = oauth.validateAuthResponse(as, client, redirected, state);
  } catch (cause) {
    if (cause instanceof oauth.AuthorizationResponseError) {
      throw new LoginFlowError(
        `the authorization server refused the login: ${cause.error}${cause.error_description ? ` (${cause.error_description})` : ''}`,
        { cause },
      );
    }
    throw new LoginFlowError(`invalid authorization redirect: ${(cause as Error).message}`, { cause });
  }
  const save = async () => {
    await props.store.checkWritable();
    const credentials = await props.tokenEndpoint.exchangeCode({
      as,
      clientId: props.clientId,
      callbackParameters,
      redirectUri: receiver.redirectUri,
      codeVerifier,
      ...(props.signal ? { signal: props.signal } : {}),
    });
    await props.store.save(credentials);
    return credentials;
  };
  const credentials = props.lock ? await props.lock.withLock(save, props.signal) : await save();
  props.log?.info(
    { issuer: credentials.issuer, clientId: credentials.clientId, scopes: credentials.scopes },
    'logged in',
  );
  return credentials;
}

/** The authorization server: discovered, with the configured endpoints over what it says. */
async function serverOf(props: LoginProps): Promise<DiscoveredServer> {
  const { authorization, token } = props.endpoints ?? {};
  if (authorization && token) {
    const base = props.baseUrl.replace(/\/+$/, '');
    return {
      resource: apiBaseOf(base),
      resourceNamed: { value: apiBaseOf(base), form: 'api' },
      warnings: [],
      authorizationServer: { issuer: base, authorization_endpoint: authorization, token_endpoint: token },
      scopesSupported: [],
    };
  }
  const discovered = await discover({
    baseUrl: props.baseUrl,
    fetch: props.fetch ?? fetch,
    ...(props.signal ? { signal: props.signal } : {}),
    ...(props.log ? { log: props.log } : {}),
  });
  const as = discovered.authorizationServer;
  return {
    ...discovered,
    authorizationServer: {
      ...as,
      authorization_endpoint: authorization ?? as.authorization_endpoint,
      token_endpoint: token ?? as.token_endpoint,
    },
  } as DiscoveredServer;
}

function authorizationUrl(
  discovered: DiscoveredServer,
  props: LoginProps,
  redirectUri: string,
  state: string,
  codeChallenge: string,
): string {
  const url = new URL(discovered.authorizationServer.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', props.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  if (props.scopes && props.scopes.length > 0) url.searchParams.set('scope', props.scopes.join(' '));
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', codeChallenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.href;
}
