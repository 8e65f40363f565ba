import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { resolveAlertTargets } from '../alerts/targets.js';
import { CredentialStoreError } from '../api/auth/auth-errors.js';
import { discover } from '../api/auth/discovery.js';
import type { RefreshEvent } from '../api/auth/refreshing-token-provider.js';
import { createTokenProvider, credentialsPathOf } from '../api/auth/token-provider-factory.js';
import { apiBaseOf } from '../api/transport.js';
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
import { messageOf } from '../domain/errors.js';
import { ReconcileSchedules } from '../jobs/reconcile-schedules.js';
import { SourceSchedules } from '../jobs/schedules.js';
import { createLogger } from '../logging/logger.js';
import { openStateDatabase } from '../state/database.js';
import { documentWriteCheck } from './doctor-compat.js';
import { sourceCheck } from './doctor-sources.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `doctor`: what was checked, how it went, and why (with the fix when it failed). */
export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
}

export interface DoctorOptions {
  /** Only this source's checks (the others are skipped). */
  sourceId?: string | undefined;
  fetch?: typeof fetch;
}

export const ok = (name: string, detail: string): DoctorCheck => ({ name, status: 'ok', detail });
export const warn = (name: string, detail: string): DoctorCheck => ({ name, status: 'warn', detail });
export const fail = (name: string, detail: string): DoctorCheck => ({ name, status: 'fail', detail });

/** Seconds of clock difference with the server beyond which a warning is given. */
const CLOCK_SKEW_WARN_SECONDS = 60;

/**
 * `doctor`: checks a setup end to end before the first pass, each part on its own (one failing
 * does not hide the others), writing nothing to the service: the configuration, the state DB and
 * its migrations, Redis and its eviction policy, the API's `/status`, discovery, the token and
 * what it may read, the organization, the advertised rate-limit policy, the clock, the document
 * write of `api.compat` (a probe on a random id), then each source (drop folder writable, SQL
 * queries compiling, module loading).
 */
export async function runDoctor(loaded: LoadedConfig, options: DoctorOptions = {}): Promise<DoctorCheck[]> {
  const { config } = loaded;
  const fetchImpl = options.fetch ?? fetch;
  const checks: DoctorCheck[] = [];
  const sources = config.sources.filter((s) => !options.sourceId || s.id === options.sourceId);
  checks.push(configCheck(loaded, sources.length, options.sourceId));
  checks.push(alertsCheck(loaded));
  const schedules = schedulesCheck(sources);
  if (schedules) checks.push(schedules);
  checks.push(await stateCheck(loaded));
  checks.push(await redisCheck(config.queue.redisUrl));
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
      .map((s) => ({ id: s.id, organizationId: s.organizationId ?? connection.api.organizationId }));
    const organizations = [
      ...new Set(
        configured.map((s) => s.organizationId).filter((id): id is string => typeof id === 'string'),
      ),
    ];
    const unnamed = configured.filter((s) => !s.organizationId).map((s) => s.id);
    for (const check of await apiChecks(view, connection.id, organizations, unnamed, fetchImpl))
      checks.push(named(check));
  }
  for (const source of sources) checks.push(await sourceCheck(source, loaded));
  return checks;
}

/** The API of one connection: `/status`, discovery, the token, the organizations, the rate policy. */
async function apiChecks(
  loaded: LoadedConfig,
  connectionId: string,
  organizations: readonly string[],
  unnamed: readonly string[],
  fetchImpl: typeof fetch,
): Promise<DoctorCheck[]> {
  const { config } = loaded;
  const baseUrl = config.api.baseUrl?.replace(/\/+$/, '');
  if (!baseUrl) return [fail('api', 'no API: set RECEIVABLES_BASE_URL (or api.baseUrl)')];
  const timeoutMs = config.api.timeoutSeconds * 1000;
  const get = (url: string, token?: string) =>
    fetchImpl(url, {
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(timeoutMs),
    });
  const status = await statusCheck(baseUrl, get);
  if (status.status === 'fail') return [status];
  return [
    status,
    await discoveryCheck(baseUrl, fetchImpl),
    ...(await tokenChecks(loaded, connectionId, organizations, unnamed, baseUrl, get, fetchImpl)),
  ];
}

/**
 * The cron expressions of the sources' `schedule` and `reconcile.schedule`, as the worker checks
 * them before it starts (it refuses to start on an invalid one); none when no source has one.
 */
function schedulesCheck(sources: readonly SourceConfig[]): DoctorCheck | null {
  const set = sources.filter((s) => s.schedule !== undefined || s.reconcile?.schedule !== undefined);
  if (set.length === 0) return null;
  const problems = [...SourceSchedules.problems(sources), ...ReconcileSchedules.problems(sources)];
  return problems.length > 0
    ? fail('schedules', `${problems.join('; ')}: the worker will not start until fixed`)
    : ok('schedules', `valid for ${set.map((s) => s.id).join(', ')}`);
}

function configCheck(loaded: LoadedConfig, sources: number, sourceId: string | undefined): DoctorCheck {
  const from = loaded.file
    ? `read ${loaded.file}`
    : 'no configuration file: built-in defaults and environment';
  if (sourceId && sources === 0) return fail('config', `${from}; no source "${sourceId}" in it`);
  if (loaded.config.sources.length === 0)
    return fail('config', `${from}; no source is configured: add a \`sources:\` entry (README, "Sources")`);
  return ok('config', `${from}; ${loaded.config.sources.length} source(s)`);
}

/** The alert targets' URLs are set (`sync` and `worker` refuse to start otherwise); none is called. */
function alertsCheck(loaded: LoadedConfig): DoctorCheck {
  const configured = loaded.config.alerts.targets;
  if (configured.length === 0)
    return ok('alerts', 'no alert target (alerts.targets): nobody is told of failures');
  try {
    const targets = resolveAlertTargets(loaded.config.alerts, loaded.env);
    return ok(
      'alerts',
      `${targets.map((t) => `${t.id} (${t.type})`).join(', ')}: URLs set (not called: doctor sends nothing)`,
    );
  } catch (error) {
    return fail('alerts', messageOf(error));
  }
}

async function stateCheck(loaded: LoadedConfig): Promise<DoctorCheck> {
  const { state } = loaded.config;
  const where = state.databaseUrl ? `Postgres (schema ${state.schema})` : `embedded, in ${state.dataDir}`;
  try {
    // Migrations are applied by every command that syncs: here only counted, never applied.
    const database = await openStateDatabase({ ...state, migrate: false });
    try {
      const applied = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`
        .execute(database.db)
        .then((r) => r.rows[0]?.n ?? 0)
        .catch(() => 0); // no table yet: nothing applied
      return applied > 0
        ? ok('state DB', `${where}: reachable, ${applied} migration(s) applied`)
        : warn('state DB', `${where}: reachable, not migrated yet (the first sync, or \`migrate\`, does it)`);
    } finally {
      await database.close();
    }
  } catch (error) {
    return fail('state DB', `${where}: ${messageOf(error)}; check DATABASE_URL (or state.dataDir)`);
  }
}

async function redisCheck(url: string | null | undefined): Promise<DoctorCheck> {
  if (!url) return ok('redis', 'not configured: `sync --once` limits its own rate; `worker` needs REDIS_URL');
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    let policy: string | undefined;
    try {
      const answer = (await redis.config('GET', 'maxmemory-policy')) as string[];
      policy = answer[1];
    } catch {
      return warn(
        'redis',
        `${redactedUrl(url)}: reachable; its maxmemory-policy cannot be read (CONFIG is off)`,
      );
    }
    return policy === 'noeviction'
      ? ok('redis', `${redactedUrl(url)}: reachable, maxmemory-policy noeviction`)
      : warn(
          'redis',
          `${redactedUrl(url)}: maxmemory-policy is ${policy}: Redis may evict queued jobs and rate-limit state; set noeviction`,
        );
  } catch (error) {
    return fail('redis', `${redactedUrl(url)}: unreachable (${messageOf(error)}); check REDIS_URL`);
  } finally {
    redis.disconnect();
  }
}

type Get = (url: string, token?: string) => Promise<Response>;

async function statusCheck(baseUrl: string, get: Get): Promise<DoctorCheck> {
  const url = `${apiBaseOf(baseUrl)}/status`;
  try {
    const response = await get(url);
    await response.body?.cancel();
    return response.ok
      ? ok('api', `GET ${url}: ${response.status}`)
      : fail(
          'api',
          `GET ${url} answered ${response.status}: is ${baseUrl} the service's {base_url} (without /api/public/v1)?`,
        );
  } catch (error) {
    return fail(
      'api',
      `${baseUrl} is unreachable: ${reasonOf(error)}; check RECEIVABLES_BASE_URL and the network`,
    );
  }
}

async function discoveryCheck(baseUrl: string, fetchImpl: typeof fetch): Promise<DoctorCheck> {
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

/** The token, what it may read, the organization, the rate-limit policy and the clock: from two reads. */
async function tokenChecks(
  loaded: LoadedConfig,
  connectionId: string,
  wanted: readonly string[],
  /** Sources that name no organization: the token must see exactly one. */
  unnamed: readonly string[],
  baseUrl: string,
  get: Get,
  fetchImpl: typeof fetch,
): Promise<DoctorCheck[]> {
  const { config, secrets } = loaded;
  let token: string;
  const refreshes: RefreshEvent[] = [];
  try {
    const provider = createTokenProvider({
      config,
      secrets,
      log: createLogger({ level: 'silent' }),
      fetch: fetchImpl,
      credentialsPath: credentialsPathOf(config, connectionId),
      connection: credentialNamesOf(connectionOf(loaded, connectionId)),
      onRefreshed: (refresh) => refreshes.push(refresh),
    });
    token = await provider.getAccessToken();
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
  let organizations: Response;
  try {
    organizations = await get(`${api}/organizations`, token);
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
  if (!organizations.ok) return [fail('token', `GET ${api}/organizations answered ${organizations.status}`)];
  const body = (await organizations.json().catch(() => null)) as {
    nodes?: Array<{ id: string; name?: string }>;
  } | null;
  const seen = body?.nodes ?? [];
  let organizationId: string | undefined;
  const listed = seen.map((o) => o.id).join(', ') || 'none';
  if (wanted.length > 0) {
    const missing = wanted.filter((id) => !seen.some((o) => o.id === id));
    organizationId = wanted.find((id) => !missing.includes(id));
    checks.push(
      missing.length === 0
        ? ok(
            'organization',
            `${wanted.join(', ')} ${wanted.length === 1 ? 'is' : 'are'} among the ${seen.length} the token sees`,
          )
        : fail(
            'organization',
            `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among those the token sees (${listed}); fix ${connectionId === DEFAULT_CONNECTION ? 'RECEIVABLES_ORGANIZATION_ID or ' : ''}the sources' organizationId`,
          ),
    );
    if (unnamed.length > 0 && seen.length !== 1)
      checks.push(
        fail(
          'organization',
          `${unnamed.length === 1 ? 'source' : 'sources'} ${unnamed.join(', ')} ${unnamed.length === 1 ? 'names' : 'name'} no organization and the token sees ${seen.length} (${listed}): set ${unnamed.length === 1 ? 'its' : 'their'} organizationId`,
        ),
      );
  } else if (seen.length === 1) {
    organizationId = seen[0]!.id;
    checks.push(ok('organization', `${organizationId}, the only one the token sees`));
  } else {
    checks.push(
      fail(
        'organization',
        `the token sees ${seen.length} organizations (${listed}): set ${connectionId === DEFAULT_CONNECTION ? 'RECEIVABLES_ORGANIZATION_ID' : `connections.${connectionId}.organizationId`} or each source's organizationId`,
      ),
    );
  }
  // What a sync reads first: the accounts of the organization (accounts:read).
  if (organizationId) {
    const accounts = await get(
      `${api}/accounts?organizationId=${encodeURIComponent(organizationId)}&first=1`,
      token,
    );
    await accounts.body?.cancel();
    checks.unshift(
      accounts.status === 403
        ? fail(
            'token',
            'valid, but may not read accounts (403): it needs accounts:read, and accounts:all to sync',
          )
        : accounts.ok
          ? ok(
              'token',
              'valid: reads organizations and accounts (writes are not tried: doctor writes nothing)',
            )
          : fail('token', `GET ${api}/accounts answered ${accounts.status}`),
    );
  } else {
    checks.unshift(ok('token', 'valid: reads organizations'));
  }
  checks.push(
    await documentWriteCheck(
      { api, token, fetch: fetchImpl, timeoutMs: config.api.timeoutSeconds * 1000 },
      config.api.compat,
    ),
  );
  const policy = organizations.headers.get('ratelimit-policy');
  checks.push(
    policy
      ? ok('rate limit', `RateLimit-Policy: ${policy}`)
      : warn(
          'rate limit',
          'no RateLimit-Policy header: the limiter assumes the spec default of 300 per 60 s',
        ),
  );
  const date = organizations.headers.get('date');
  if (date) {
    const skew = Math.round((Date.parse(date) - Date.now()) / 1000);
    checks.push(
      Math.abs(skew) > CLOCK_SKEW_WARN_SECONDS
        ? warn(
            'clock',
            `this machine's clock is ${Math.abs(skew)} s ${skew > 0 ? 'behind' : 'ahead of'} the server's: token expiry and rate windows drift; sync the clock (NTP)`,
          )
        : ok('clock', `within ${Math.max(1, Math.abs(skew))} s of the server's`),
    );
  } else {
    checks.push(warn('clock', 'the server sends no Date header: the clock skew is unknown'));
  }
  return checks;
}

function reasonOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  return cause ? `${messageOf(error)} (${messageOf(cause)})` : messageOf(error);
}

function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
