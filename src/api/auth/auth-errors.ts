import { ReceivablesError } from '../errors.js';

/**
 * Errors of the auth module. None carries a token, a code or a verifier in its message: they end up
 * in logs and on the terminal.
 */

/**
 * The server's discovery documents are missing, malformed or inconsistent (RFC 9728 / RFC 8414).
 * Not retryable, but when the documents could not be fetched at all (`retryable: true`).
 */
export class DiscoveryError extends ReceivablesError {
  constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super('AUTH_DISCOVERY_FAILED', message, options);
  }
}

/** The interactive login did not complete: refused, timed out, wrong state, failed exchange. */
export class LoginFlowError extends ReceivablesError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('AUTH_LOGIN_FAILED', message, options);
  }
}

/** The credentials file cannot be read or written: wrong key, tampered file, missing key, I/O. */
export class CredentialStoreError extends ReceivablesError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    // A wrong or missing RECEIVABLES_TOKEN_KEY, or a file this key cannot open: the setup must change.
    super('AUTH_CREDENTIALS_UNUSABLE', message, options);
  }
}

/**
 * The token endpoint failed for a reason that may pass (5xx, 429 beyond our patience, network).
 * The stored refresh token is kept: the next attempt may succeed. Not retryable when the endpoint
 * refused the grant or gave an unusable answer below 500 (`retryable: false`).
 */
export class TokenEndpointError extends ReceivablesError {
  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super('AUTH_TOKEN_ENDPOINT_FAILED', message, options);
  }
}

/** Another process held the refresh lock for longer than we could wait. */
export class RefreshLockTimeoutError extends ReceivablesError {
  constructor(message: string) {
    super('AUTH_REFRESH_LOCK_TIMEOUT', message);
  }
}

/**
 * The authorization server does not know our client id (`invalid_client`): no login or token helps
 * until the client id is the one the service registered for this connector. The tokens stored are
 * kept (no grant was made: nothing was spent).
 */
export class ClientUnknownError extends ReceivablesError {
  constructor(clientId: string, description?: string) {
    super(
      'AUTH_CLIENT_UNKNOWN',
      `The authorization server does not know the OAuth client id "${clientId}" (invalid_client${description ? `: ${description}` : ''}). ` +
        'Use the client id your service registered for receivables-sync (its administrators or developer settings give it): ' +
        'pass --client-id to `auth login` / `auth import`, or set RECEIVABLES_CLIENT_ID (auth.clientId in the configuration; default receivables-sync)',
    );
  }
}
