import type { Clock } from '../domain/clock.js';
import { errorCodeOf } from '../domain/errors.js';
import { tokenExpiringEvent, tokenRefusedEvent } from './events.js';
import type { AlertSink } from './ports.js';

/** The API client's token provider, as far as watching it goes (`src/api/auth/types.ts`). */
export interface AccessTokens {
  getAccessToken(): Promise<string>;
  invalidate(token: string): Promise<string>;
  budgetKey(token: string): string;
}

/**
 * The token provider, telling `token.refused` when it finds the credentials refused
 * (`LOGIN_REQUIRED`: the refresh token got `invalid_grant`, or the API refused
 * RECEIVABLES_ACCESS_TOKEN). Told once until a refresh works again, however many requests fail
 * meanwhile; what it throws is thrown on, unchanged.
 */
export function tellingRefusals(tokens: AccessTokens, alerts: AlertSink, clock: Clock): AccessTokens {
  let told = false;
  const watched = async (call: () => Promise<string>, refreshed: boolean): Promise<string> => {
    try {
      const token = await call();
      if (refreshed) told = false;
      return token;
    } catch (error) {
      if (errorCodeOf(error) === 'LOGIN_REQUIRED' && !told) {
        told = true;
        alerts.notify(tokenRefusedEvent(error, clock));
      }
      throw error;
    }
  };
  return {
    getAccessToken: () => watched(() => tokens.getAccessToken(), false),
    invalidate: (token) => watched(() => tokens.invalidate(token), true),
    budgetKey: (token) => tokens.budgetKey(token),
  };
}

/**
 * The lifetime of the refresh token a token endpoint answer states, in seconds, when it states
 * one: OAuth leaves it out of the standard, and servers that tell use `refresh_token_expires_in`
 * (GitHub, Microsoft, Xero...) or `refresh_expires_in` (Keycloak, where 0 means none).
 */
export function refreshTokenLifetimeOf(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null;
  const fields = body as Record<string, unknown>;
  for (const name of ['refresh_token_expires_in', 'refresh_expires_in']) {
    const value = Number(fields[name]);
    if (fields[name] !== undefined && fields[name] !== null && Number.isFinite(value) && value > 0)
      return value;
  }
  return null;
}

/**
 * The `fetch` of the token endpoint, reading each successful answer's refresh token lifetime (see
 * `refreshTokenLifetimeOf`) on a copy of the body, without holding up the answer: when the new
 * refresh token expires within `expiryDays`, `token.expiring` is told. A server that does not say
 * gets only `token.refused`, when the refresh fails.
 */
export function watchingTokenAnswers(
  fetchImpl: typeof fetch | undefined,
  props: { alerts: AlertSink; expiryDays: number; clock: Clock },
): typeof fetch {
  const soonMs = props.expiryDays * 86_400_000;
  return (async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    // The global fetch is looked up at each call, as the token endpoint client does without one.
    const response = await (fetchImpl ?? fetch)(input, init);
    if (response.ok && /json/i.test(response.headers.get('content-type') ?? '')) {
      const receivedAt = props.clock.now().getTime();
      void response
        .clone()
        .json()
        .then((body: unknown) => {
          const seconds = refreshTokenLifetimeOf(body);
          if (seconds !== null && seconds * 1000 <= soonMs)
            props.alerts.notify(tokenExpiringEvent(new Date(receivedAt + seconds * 1000), props.clock));
        })
        .catch(() => undefined);
    }
    return response;
  }) as typeof fetch;
}
