import type { Logger } from '../../logging/logger.js';
import { refreshEndpointOf } from './discovery.js';
import type { RefreshLock } from './refresh-lock.js';
import type { TokenEndpointClient } from './token-endpoint.js';
import type { CredentialStore, StoredCredentials } from './token-storage.js';

export interface ImportRefreshTokenProps {
  baseUrl: string;
  clientId: string;
  /** Obtained elsewhere (another machine's login, an admin console). Spent by this import. */
  refreshToken: string;
  /** `auth.tokenEndpoint`; default the spec's `{base_url}/api/oauth/token`. */
  tokenEndpointUrl?: string | undefined;
  store: CredentialStore;
  tokenEndpoint: TokenEndpointClient;
  lock?: RefreshLock;
  log?: Logger;
  signal?: AbortSignal;
}

/**
 * `auth import`: exchanges the refresh token once at the token endpoint (the spec's, or
 * `auth.tokenEndpoint`; no discovery needed), which proves it works and, the server rotating it,
 * spends it, and stores the rotated credentials. Nothing is exchanged when the store could not keep
 * the result (no key, a folder that takes no file).
 */
export async function importRefreshToken(props: ImportRefreshTokenProps): Promise<StoredCredentials> {
  const refreshToken = props.refreshToken.trim();
  const endpoint = refreshEndpointOf(props.baseUrl, props.tokenEndpointUrl);
  const seed: StoredCredentials = {
    issuer: endpoint.issuer,
    tokenEndpoint: endpoint.tokenEndpoint,
    clientId: props.clientId,
    accessToken: '-',
    accessTokenExpiresAt: 0,
    refreshToken,
    scopes: [],
    obtainedAt: 0,
  };
  // Spending the token is final: prove first that its rotated successor can be stored (before the
  // lock too, whose file sits beside the credentials, so the error names the store's problem).
  await props.store.checkWritable();
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
