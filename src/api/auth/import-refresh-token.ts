import type { Logger } from '../../logging/logger.js';
import { discover } from './discovery.js';
import type { RefreshLock } from './refresh-lock.js';
import type { TokenEndpointClient } from './token-endpoint.js';
import type { CredentialStore, StoredCredentials } from './token-storage.js';

export interface ImportRefreshTokenProps {
  baseUrl: string;
  clientId: string;
  /** Obtained elsewhere (another machine's login, an admin console). Spent by this import. */
  refreshToken: string;
  store: CredentialStore;
  tokenEndpoint: TokenEndpointClient;
  lock?: RefreshLock;
  fetch?: typeof fetch;
  log?: Logger;
  signal?: AbortSignal;
}

/**
 * `auth import`: finds the token endpoint by discovery, exchanges the refresh token once (which
 * proves it works and, the server rotating it, spends it) and stores the rotated credentials.
 */
export async function importRefreshToken(props: ImportRefreshTokenProps): Promise<StoredCredentials> {
  const refreshToken = props.refreshToken.trim();
  const discovered = await discover({
    baseUrl: props.baseUrl,
    ...(props.fetch ? { fetch: props.fetch } : {}),
    ...(props.log ? { log: props.log } : {}),
    ...(props.signal ? { signal: props.signal } : {}),
  });
  const as = discovered.authorizationServer;
  const seed: StoredCredentials = {
    issuer: as.issuer,
    tokenEndpoint: as.token_endpoint!,
    clientId: props.clientId,
    accessToken: '-',
    accessTokenExpiresAt: 0,
    refreshToken,
    scopes: [],
    obtainedAt: 0,
  };
  const exchange = async () => {
    const credentials = await props.tokenEndpoint.refresh(seed, props.signal);
    await props.store.save(credentials);
    return credentials;
  };
  const credentials = props.lock ? await props.lock.withLock(exchange, props.signal) : await exchange();
  props.log?.info(
    { issuer: credentials.issuer, clientId: credentials.clientId, scopes: credentials.scopes },
    'refresh token imported',
  );
  return credentials;
}
