import { CredentialStoreError } from '../api/auth/auth-errors.js';
import { discover } from '../api/auth/discovery.js';
import type { RefreshEvent } from '../api/auth/refreshing-token-provider.js';
import { createTokenProvider, credentialsPathOf } from '../api/auth/token-provider-factory.js';
import type { TokenProvider } from '../api/auth/types.js';
import { ReceivablesClient } from '../api/client.js';
import { NetworkError } from '../api/errors.js';
import type { RateLimiter } from '../api/rate-limit/types.js';
import { apiBaseOf, type ProbeAnswer } from '../api/requests.js';
import {
  connectionIdOf,
  connectionOf,
  connectionsUsedBy,
  connectionView,
  credentialNamesOf,
  DEFAULT_CONNECTION,
} from '../config/connections.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { namedOrganization } from '../config/source-organization.js';
import { messageOf } from '../domain/errors.js';
import { createLogger } from '../logging/logger.js';
import { type DoctorCheck, type DoctorOptions, fail, ok, warn } from './doctor.js';
import { documentWriteCheck } from './doctor-compat.js';
import { organizationChecks, organizationsIn } from './doctor-organizations.js';

/** Seconds of clock difference with the server beyond which a warning is given. */
const CLOCK_SKEW_WARN_SECONDS = 60;

/** The API checks of each connection the sources use (the default one when none is configured). */
export async function connectionChecks(
  loaded: LoadedConfig,
  sources: readonly SourceConfig[],
  options: DoctorOptions,
  limiter: RateLimiter,
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  // Each connection the sources use (the default one when none is configured), checked on its own;
  // with several, each check's name says which connection it is about.
  const connections = connectionsUsedBy(loaded, sources.length > 0 ? sources : [{}]);
  for (const connection of connections) {
    const named = (check: DoctorCheck): DoctorCheck =>
      connections.length > 1 || connection.id !== DEFAULT_CONNECTION
        ? { ...check, name: `${check.name} (${connection.id})` }
        : check;
    const view = connectionView(loaded, connection);
    // Each source's organization as configured (its own, else its connection's); the sources with
    // none need the token to see exactly one.
    const configured = sources
      .filter((s) => connectionIdOf(s) === connection.id)
      .map((s) => ({ id: s.id, organizationId: namedOrganization(s, connection)?.id }));
    const organizations = [
      ...new Set(
        configured.map((s) => s.organizationId).filter((id): id is string => typeof id === 'string'),
      ),
    ];
    const unnamed = configured.filter((s) => !s.organizationId).map((s) => s.id);
    for (const check of await apiChecks(view, connection.id, organizations, unnamed, options, limiter))
      checks.push(named(check));
  }
  return checks;
}

/** The API of one connection: `/status`, discovery, the token, the organizations, the rate policy. */
async function apiChecks(
  loaded: LoadedConfig,
  connectionId: string,
  organizations: readonly string[],
  unnamed: readonly string[],
  options: DoctorOptions,
  limiter: RateLimiter,
): Promise<DoctorCheck[]> {
  const { config, secrets } = loaded;
  const baseUrl = config.api.baseUrl?.replace(/\/+$/, '');
  if (!baseUrl) return [fail('api', 'no API: set RECEIVABLES_BASE_URL (or api.baseUrl)')];
  const refreshes: RefreshEvent[] = [];
  const tokens = madeOnFirstUse(() =>
    createTokenProvider({
      config,
      secrets,
      log: createLogger({ level: 'silent' }),
      fetch: options.fetch,
      credentialsPath: credentialsPathOf(config, connectionId),
      connection: credentialNamesOf(connectionOf(loaded, connectionId)),
      onRefreshed: (refresh) => refreshes.push(refresh),
    }),
  );
  const client = new ReceivablesClient({
    baseUrl,
    tokens,
    limiter,
    logger: createLogger({ level: 'silent' }),
    fetch: options.fetch,
    timeoutMs: config.api.timeoutSeconds * 1000,
    compat: config.api.compat,
  });
  try {
    const status = await statusCheck(baseUrl, client);
    if (status.status === 'fail') return [status];
    return [
      status,
      await discoveryCheck(baseUrl, options.fetch),
      ...(await tokenChecks(loaded, connectionId, organizations, unnamed, {
        baseUrl,
        client,
        tokens,
        refreshes,
      })),
    ];
  } finally {
    await client.close();
  }
}

/**
 * The connection's token provider, made when the token is first asked for: `/status` needs none,
 * and making it can fail (the token check says why).
 */
function madeOnFirstUse(make: () => TokenProvider): TokenProvider {
  let made: TokenProvider | undefined;
  const provider = () => {
    made ??= make();
    return made;
  };
  return {
    getAccessToken: async () => provider().getAccessToken(),
    invalidate: async (token) => provider().invalidate(token),
    budgetKey: (token) => provider().budgetKey(token),
  };
}

/** A 2xx. */
const answeredOk = (answer: ProbeAnswer): boolean => answer.status >= 200 && answer.status < 300;

async function statusCheck(baseUrl: string, client: ReceivablesClient): Promise<DoctorCheck> {
  const url = `${apiBaseOf(baseUrl)}/status`;
  try {
    const answer = await client.probe({ method: 'GET', path: '/status', authenticated: false });
    return answeredOk(answer)
      ? ok('api', `GET ${url}: ${answer.status}`)
      : fail(
          'api',
          `GET ${url} answered ${answer.status}: is ${baseUrl} the service's {base_url} (without /api/public/v1)?`,
        );
  } catch (error) {
    return fail(
      'api',
      `${baseUrl} is unreachable: ${reasonOf(error)}; check RECEIVABLES_BASE_URL and the network`,
    );
  }
}

async function discoveryCheck(baseUrl: string, fetchImpl: typeof fetch | undefined): Promise<DoctorCheck> {
  try {
    const found = await discover({ baseUrl, fetch: fetchImpl });
    const what = `authorization server ${found.authorizationServer.issuer}; the protected resource names ${found.resourceNamed.value}`;
    return found.warnings.length > 0
      ? warn('discovery', `${what}; ${found.warnings.join('; ')}`)
      : ok('discovery', what);
  } catch (error) {
    return warn(
      'discovery',
      `${messageOf(error)}; a refresh token still works (the spec's {base_url}/api/oauth/token); ` +
        '`auth login` needs discovery, or auth.authorizationEndpoint and auth.tokenEndpoint',
    );
  }
}

/**
 * A refresh grant doctor had to make (nothing usable was stored, or it expired): a write at the
 * token endpoint, said as such; the rotated token is stored, so the next command uses it.
 */
const rotationCheck = (refresh: RefreshEvent): DoctorCheck =>
  ok(
    'token refresh',
    `a refresh token was exchanged at the token endpoint (a write there: ${refresh.rotated ? 'it is spent; its successor is' : 'the new access token is'} stored in ${refresh.location})`,
  );

/** One connection's API as the token checks reach it. */
interface ConnectionApi {
  baseUrl: string;
  client: ReceivablesClient;
  /** The client's token provider: asked first on its own, so a refusal to give one is the token check's. */
  tokens: TokenProvider;
  /** The refresh grants the provider made, told as they happen. */
  refreshes: readonly RefreshEvent[];
}

/** The token, what it may read, the organization, the rate-limit policy and the clock: from two reads. */
async function tokenChecks(
  loaded: LoadedConfig,
  connectionId: string,
  wanted: readonly string[],
  /** Sources that name no organization: the token must see exactly one. */
  unnamed: readonly string[],
  { baseUrl, client, tokens, refreshes }: ConnectionApi,
): Promise<DoctorCheck[]> {
  try {
    await tokens.getAccessToken();
  } catch (error) {
    // The store refused before any grant: its message has the fix, and no token was spent.
    if (error instanceof CredentialStoreError) return [fail('token', messageOf(error))];
    return [
      fail(
        'token',
        connectionId === DEFAULT_CONNECTION
          ? `no usable credentials: ${messageOf(error)}; set RECEIVABLES_ACCESS_TOKEN or RECEIVABLES_REFRESH_TOKEN, or run \`auth login\``
          : `no usable credentials: ${messageOf(error)}`,
      ),
    ];
  }
  const api = apiBaseOf(baseUrl);
  let organizations: ProbeAnswer;
  try {
    // Answered whatever its status (no refresh on a 401): doctor reports the token as it is.
    organizations = await client.probe({ method: 'GET', path: '/organizations' });
  } catch (error) {
    return [fail('token', `GET ${api}/organizations: ${reasonOf(error)}`)];
  }
  const checks: DoctorCheck[] = refreshes.map(rotationCheck);
  if (organizations.status === 401)
    return [fail('token', 'refused (401): the token is invalid or expired; log in again')];
  if (organizations.status === 403)
    return [
      fail('token', 'valid, but may not read organizations (403): it needs the organizations:read scope'),
    ];
  if (!answeredOk(organizations))
    return [fail('token', `GET ${api}/organizations answered ${organizations.status}`)];
  const seen = organizationsIn(organizations.text);
  const organization = organizationChecks(connectionId, wanted, unnamed, seen);
  checks.push(...organization.checks);
  checks.unshift(await readCheck(client, api, organization.organizationId));
  checks.push(await documentWriteCheck(client, loaded.config.api.compat));
  const policy = organizations.headers.get('ratelimit-policy');
  checks.push(
    policy
      ? ok('rate limit', `RateLimit-Policy: ${policy}`)
      : warn(
          'rate limit',
          'no RateLimit-Policy header: the limiter assumes the spec default of 300 per 60 s',
        ),
  );
  checks.push(clockCheck(organizations.headers.get('date')));
  return checks;
}

/** What a sync reads first: the accounts of the organization (accounts:read). */
async function readCheck(
  client: ReceivablesClient,
  api: string,
  organizationId: string | undefined,
): Promise<DoctorCheck> {
  if (!organizationId) return ok('token', 'valid: reads organizations');
  let accounts: ProbeAnswer;
  try {
    accounts = await client.probe({ method: 'GET', path: '/accounts', query: { organizationId, first: 1 } });
  } catch (error) {
    return fail('token', `GET ${api}/accounts: ${reasonOf(error)}`);
  }
  if (accounts.status === 403)
    return fail(
      'token',
      'valid, but may not read accounts (403): it needs accounts:read, and accounts:all to sync',
    );
  return answeredOk(accounts)
    ? ok('token', 'valid: reads organizations and accounts (writes are not tried: doctor writes nothing)')
    : fail('token', `GET ${api}/accounts answered ${accounts.status}`);
}

/** This machine's clock against the server's `Date`. */
function clockCheck(date: string | null): DoctorCheck {
  if (!date) return warn('clock', 'the server sends no Date header: the clock skew is unknown');
  const skew = Math.round((Date.parse(date) - Date.now()) / 1000);
  return Math.abs(skew) > CLOCK_SKEW_WARN_SECONDS
    ? warn(
        'clock',
        `this machine's clock is ${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} the server's: token expiry and rate windows drift; sync the clock (NTP)`,
      )
    : ok('clock', `within ${Math.max(1, Math.abs(skew))} s of the server's`);
}

function reasonOf(error: unknown): string {
  // The transport's NetworkError names the request, and what the network said is its cause.
  if (error instanceof NetworkError && error.cause !== undefined) return reasonOf(error.cause);
  const cause = (error as { cause?: unknown })?.cause;
  return cause ? `${messageOf(error)} (${messageOf(cause)})` : messageOf(error);
}
