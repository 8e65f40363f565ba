import * as oauth from 'oauth4webapi';
import { type Clock, systemClock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { LoginRequiredError } from '../errors.js';
import { parseRateInfo } from '../rate-limit/headers.js';
import type { RateLimiter } from '../rate-limit/types.js';
import { ClientUnknownError, TokenEndpointError } from './auth-errors.js';
import { oauthHttpOptions } from './discovery.js';
import { TOKEN_ENDPOINT_POLICY_NAME } from './token-endpoint-limiter.js';
import type { StoredCredentials } from './token-storage.js';

export interface TokenEndpointClientProps {
  limiter: RateLimiter;
  fetch?: typeof fetch;
  clock?: Clock;
  log?: Logger;
  /** Per request. Default 15 s, well under the refresh lock's 30 s time-to-live. */
  timeoutMs?: number;
  /** Attempts when the server answers 429 (a 429 spends no grant). Default 3. */
  maxAttempts?: number;
}

/** OAuth errors after which only a new login helps. */
const LOGIN_AGAIN = new Set(['invalid_grant', 'unauthorized_client']);

type Grant = (options: ReturnType<typeof oauthHttpOptions>) => Promise<Response>;

/**
 * The two grants of `POST /api/oauth/token`, through oauth4webapi, each call counted by the
 * token-endpoint limiter. Turns the answers into `StoredCredentials` or into errors that say what
 * to do: `LoginRequiredError` (invalid_grant: run `auth login`), `ClientUnknownError` (invalid_client:
 * set the client id), `TokenEndpointError` (try later).
 */
export class TokenEndpointClient {
  readonly #limiter: RateLimiter;
  readonly #fetch: typeof fetch;
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #timeoutMs: number;
  readonly #maxAttempts: number;

  constructor(props: TokenEndpointClientProps) {
    this.#limiter = props.limiter;
    this.#fetch = props.fetch ?? fetch;
    this.#clock = props.clock ?? systemClock;
    this.#log = props.log;
    this.#timeoutMs = props.timeoutMs ?? 15_000;
    this.#maxAttempts = props.maxAttempts ?? 3;
  }

  /** The refresh token grant. The answer carries the rotated refresh token (else the old one stays). */
  async refresh(current: StoredCredentials, signal?: AbortSignal): Promise<StoredCredentials> {
    const refreshToken = current.refreshToken;
    if (refreshToken === null) throw new LoginRequiredError('No refresh token is stored');
    const as = { issuer: current.issuer, token_endpoint: current.tokenEndpoint };
    const client = { client_id: current.clientId };
    const result = await this.#call(
      current.tokenEndpoint,
      current.clientId,
      'refresh_token',
      (options) => oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshToken, options),
      (response) => oauth.processRefreshTokenResponse(as, client, response),
      signal,
    );
    return this.#credentials(result, { ...current, refreshToken });
  }

  /** The authorization code grant (PKCE), once the redirect's parameters were validated. */
  async exchangeCode(init: {
    as: oauth.AuthorizationServer;
    clientId: string;
    callbackParameters: URLSearchParams;
    redirectUri: string;
    codeVerifier: string;
    signal?: AbortSignal;
  }): Promise<StoredCredentials> {
    const { as, callbackParameters, redirectUri, codeVerifier } = init;
    const client = { client_id: init.clientId };
    const tokenEndpoint = as.token_endpoint!;
    const result = await this.#call(
      tokenEndpoint,
      init.clientId,
      'authorization_code',
      (options) =>
        oauth.authorizationCodeGrantRequest(
          as,
          client,
          oauth.None(),
          callbackParameters,
          redirectUri,
          codeVerifier,
          options,
        ),
      (response) => oauth.processAuthorizationCodeResponse(as, client, response),
      init.signal,
    );
    const base = {
      issuer: as.issuer,
      tokenEndpoint,
      clientId: init.clientId,
      refreshToken: null,
      scopes: [],
    };
    return this.#credentials(result, { ...base, accessToken: '', accessTokenExpiresAt: null, obtainedAt: 0 });
  }

  async #call(
    tokenEndpoint: string,
    clientId: string,
    grantType: string,
    send: Grant,
    process: (response: Response) => Promise<oauth.TokenEndpointResponse>,
    signal?: AbortSignal,
  ): Promise<oauth.TokenEndpointResponse> {
    const budgetKey = `token-endpoint:${new URL(tokenEndpoint).host}`;
    for (let attempt = 1; ; attempt++) {
      await this.#limiter.acquire(budgetKey, signal);
      const timeout = AbortSignal.timeout(this.#timeoutMs);
      const requestSignal = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let response: Response;
      const sentAt = performance.now();
      try {
        response = await send(oauthHttpOptions(tokenEndpoint, this.#fetch, requestSignal));
      } catch (cause) {
        // The request may have reached the server and rotated the token: no blind retry here.
        throw new TokenEndpointError(
          `the token endpoint did not answer (${grantType}): ${(cause as Error).message}`,
          {
            cause,
          },
        );
      }
      const info = parseRateInfo(response.status, response.headers, {
        policyName: TOKEN_ENDPOINT_POLICY_NAME,
      });
      await this.#limiter.observe(budgetKey, { ...info, elapsedMs: performance.now() - sentAt });
      this.#log?.info({ grantType, status: response.status, attempt }, 'token endpoint called');
      if (response.status === 429) {
        await response.body?.cancel();
        if (attempt >= this.#maxAttempts) {
          throw new TokenEndpointError(
            `the token endpoint kept answering 429 (${attempt} attempts, ${grantType})`,
          );
        }
        continue;
      }
      try {
        return await process(response);
      } catch (cause) {
        throw this.#failure(cause, response.status, grantType, clientId);
      }
    }
  }

  #failure(cause: unknown, status: number, grantType: string, clientId: string): Error {
    if (cause instanceof oauth.ResponseBodyError) {
      if (cause.error === 'invalid_client') {
        this.#log?.warn(
          { grantType, error: cause.error, clientId },
          'the authorization server does not know the client',
        );
        return new ClientUnknownError(clientId, cause.error_description);
      }
      if (LOGIN_AGAIN.has(cause.error)) {
        this.#log?.warn({ grantType, error: cause.error }, 'the authorization server refused the grant');
        return new LoginRequiredError(
          `The authorization server refused the ${grantType === 'refresh_token' ? 'stored refresh token' : 'authorization code'} (${cause.error}${cause.error_description ? `: ${cause.error_description}` : ''})`,
        );
      }
      return new TokenEndpointError(`the token endpoint refused the ${grantType} grant: ${cause.error}`, {
        cause,
        retryable: false,
      });
    }
    return new TokenEndpointError(
      `unusable token endpoint answer (${grantType}, HTTP ${status}): ${(cause as Error).message}`,
      { cause, retryable: status >= 500 },
    );
  }

  #credentials(result: oauth.TokenEndpointResponse, previous: StoredCredentials): StoredCredentials {
    const now = this.#clock.now().getTime();
    const expiresIn = result.expires_in;
    return {
      ...previous,
      accessToken: result.access_token,
      accessTokenExpiresAt: typeof expiresIn === 'number' && expiresIn > 0 ? now + expiresIn * 1000 : null,
      refreshToken: result.refresh_token ?? previous.refreshToken,
      scopes: result.scope ? result.scope.split(' ').filter(Boolean) : previous.scopes,
      obtainedAt: now,
    };
  }
}
