import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createTokenProvider, credentialsPathOf } from '../api/auth/token-provider-factory.js';
import type { TokenProvider } from '../api/auth/types.js';
import { ReceivablesClient } from '../api/client.js';
import type { MeteredRateLimiter } from '../api/rate-limit/types.js';
import type { RequestStats, RetryNotice } from '../api/requests.js';
import {
  type ApiConnection,
  apiConnections,
  connectionIdOf,
  connectionView,
  credentialNamesOf,
  DEFAULT_CONNECTION,
} from '../config/connections.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { namedOrganization, settleOrganization } from '../config/source-organization.js';
import { AppError } from '../domain/errors.js';
import type { StateDb } from '../state/database.js';
import { type StateScope, type StateScopes, UNSTAMPED_SCOPE } from '../state/scopes.js';
import type { Alerting } from './alerting.js';
import { ClientSyncApi } from './sync-api.js';

/** Where one source syncs to: its connection's client and the organization, resolved and checked. */
export interface SourceTarget {
  connectionId: string;
  organizationId: string;
  client: ReceivablesClient;
  api: ClientSyncApi;
}

export interface ApiTargetsProps {
  loaded: LoadedConfig;
  logger: Logger;
  limiter: MeteredRateLimiter;
  alerting: Pick<Alerting, 'tokens' | 'tokenFetch'>;
  redis: Redis | undefined;
  fetch?: typeof fetch | undefined;
  /**
   * Told each source's scope once its target is resolved (the state repositories key the record
   * map, cursors and failures by it); and, the first time the default connection's organization is
   * known, that organization (state written before connections existed is stamped with it).
   */
  onScope: (sourceId: string, scope: StateScope) => void;
  onDefaultOrganization?: (organizationId: string) => Promise<void>;
  /** Told of each retry of every connection's client (the CLI's progress line shows them). */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

const PAGE = 100;

/**
 * The API side of a runtime with several connections: one client per connection (its own token
 * provider and credentials file, the shared rate limiter keyed by token), opened on first use; the
 * organizations each token sees, listed once per process (one request), to resolve and check
 * each source's organization. A failed listing is forgotten, so the next pass asks again.
 *
 * @example
 * const targets = new ApiTargets({ loaded, logger, limiter, alerting, redis, onScope });
 * const { api, organizationId } = await targets.of(source);
 */
export class ApiTargets {
  readonly #props: ApiTargetsProps;
  readonly #connections: Map<string, ApiConnection>;
  readonly #clients = new Map<string, { client: ReceivablesClient; tokens: TokenProvider }>();
  readonly #organizations = new Map<string, Promise<string[]>>();
  /** The budget key of the token each connection last handed out. */
  readonly #budgetKeys = new Map<string, string>();
  /** The listings that succeeded, by connection. */
  readonly #listed = new Map<string, string[]>();
  #adopted: Promise<void> | undefined;

  constructor(props: ApiTargetsProps) {
    this.#props = props;
    this.#connections = apiConnections(props.loaded);
  }

  /** The connection of the source, with a configuration error when it has no API to reach. */
  connection(id: string): ApiConnection {
    const found = this.#connections.get(id);
    if (!found) throw new AppError('CONNECTION_UNKNOWN', `no connection "${id}"`);
    if (!found.api.baseUrl) throw noApiToSyncTo(id);
    return found;
  }

  /** The client of a connection, opened on first use. */
  client(connectionId: string): ReceivablesClient {
    const open = this.#clients.get(connectionId);
    if (open) return open.client;
    const connection = this.connection(connectionId);
    const { loaded, logger, alerting, redis, limiter } = this.#props;
    const view = connectionView(loaded, connection);
    const log = connectionId === DEFAULT_CONNECTION ? logger : logger.child({ connection: connectionId });
    const tokens = this.#watchingBudget(
      connectionId,
      alerting.tokens(
        createTokenProvider({
          config: view.config,
          secrets: view.secrets,
          log,
          // The token endpoint's budget and the refresh lock stay under the default prefix, as the
          // API limiter's: deployments sharing a Redis and a token share them.
          ...(redis ? { redis } : {}),
          credentialsPath: credentialsPathOf(view.config, connectionId),
          connection: credentialNamesOf(connection),
          // Only the token endpoint's calls go through it: their answers may say when the refresh token expires.
          fetch: alerting.tokenFetch(this.#props.fetch),
        }),
      ) as TokenProvider,
    );
    const client = new ReceivablesClient({
      baseUrl: connection.api.baseUrl!,
      fetch: this.#props.fetch,
      tokens,
      limiter,
      logger: log,
      timeoutMs: connection.api.timeoutSeconds * 1000,
      retry: { maxAttempts: connection.api.retryAttempts },
      concurrency: connection.api.concurrency,
      compat: connection.api.compat,
      onRetry: this.#props.onRetry,
    });
    this.#clients.set(connectionId, { client, tokens });
    return client;
  }

  /**
   * The source's connection, organization and API. An organization the configuration names costs
   * no request (as an unchanged pass costs none); one it leaves out is the only one the token sees
   * (one listing per process). Once a listing is known (`verify`, or that resolution), an
   * organization the token does not see is refused with a configuration error.
   */
  async of(source: Pick<SourceConfig, 'id' | 'connection' | 'organizationId'>): Promise<SourceTarget> {
    const connectionId = connectionIdOf(source);
    const connection = this.connection(connectionId);
    const client = this.client(connectionId);
    const named = namedOrganization(source, connection);
    const visible = named ? this.#listed.get(connectionId) : await this.organizations(connectionId);
    if (connectionId === DEFAULT_CONNECTION) await this.#adoptUnstamped(connection, visible);
    const settled = settleOrganization(source, connection, visible);
    if (settled.organizationId === null) throw settled.error;
    const { organizationId } = settled;
    if (visible && !visible.includes(organizationId)) {
      throw new AppError(
        'ORGANIZATION_NOT_VISIBLE',
        `source "${source.id}": organization ${organizationId} is not among those the token of connection "${connectionId}" sees (${visible.join(', ') || 'none'})`,
      );
    }
    this.#props.onScope(source.id, { connectionId, organizationId });
    return { connectionId, organizationId, client, api: new ClientSyncApi(client, organizationId) };
  }

  /** Whether the configuration names the source's organization (then resolving it costs no request). */
  namesOrganization(source: Pick<SourceConfig, 'connection' | 'organizationId'>): boolean {
    return namedOrganization(source, this.connection(connectionIdOf(source))) !== null;
  }

  /**
   * Checks every source's target against what its token sees: one authenticated read per
   * connection (`GET /organizations`), so a refused token, an API gone or an organization out of
   * the token's reach is found before a pass (`sync --once` when it read nothing, `reconcile`, the
   * worker's start).
   */
  async verify(
    sources: readonly Pick<SourceConfig, 'id' | 'connection' | 'organizationId'>[],
  ): Promise<void> {
    const [first] = await this.check(sources);
    if (first) throw first.error;
  }

  /** What `verify` finds, for every source: the ones that cannot sync, each with its error. */
  async check(
    sources: readonly Pick<SourceConfig, 'id' | 'connection' | 'organizationId'>[],
  ): Promise<Array<{ sourceId: string; error: unknown }>> {
    const problems: Array<{ sourceId: string; error: unknown }> = [];
    for (const source of sources) {
      try {
        await this.organizations(connectionIdOf(source));
        await this.of(source);
      } catch (error) {
        problems.push({ sourceId: source.id, error });
      }
    }
    return problems;
  }

  /** The organizations the connection's token sees: one listing per process (retried after a failure). */
  organizations(connectionId: string): Promise<string[]> {
    let listed = this.#organizations.get(connectionId);
    if (!listed) {
      listed = listOrganizations(this.client(connectionId)).then((ids) => {
        this.#listed.set(connectionId, ids);
        return ids;
      });
      this.#organizations.set(connectionId, listed);
      listed.catch(() => this.#organizations.delete(connectionId));
    }
    return listed;
  }

  /** Requests and answers of every connection's client, added up (metrics, `--json`). */
  stats(): { requests: RequestStats; responses: Map<number, number> } {
    const requests: RequestStats = { requests: 0, rateLimited: 0, retries: 0, waitedMs: 0 };
    const responses = new Map<number, number>();
    for (const { client } of this.#clients.values()) {
      const own = client.stats;
      requests.requests += own.requests;
      requests.rateLimited += own.rateLimited;
      requests.retries += own.retries;
      requests.waitedMs += own.waitedMs;
      for (const [status, n] of client.responsesByStatus)
        responses.set(status, (responses.get(status) ?? 0) + n);
    }
    return { requests, responses };
  }

  /**
   * Each opened connection's current rate budget (the key of the token it last used) and the
   * organizations its token sees when listed: what the dashboard shows per token.
   */
  budgets(): Array<{ connectionId: string; budgetKey: string; organizations: string[] }> {
    return [...this.#budgetKeys.entries()].map(([connectionId, budgetKey]) => ({
      connectionId,
      budgetKey,
      organizations: this.#listed.get(connectionId) ?? [],
    }));
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map(({ client }) => client.close()));
  }

  /** Remembers the budget key of each token the provider hands out (rotation starts a new budget). */
  #watchingBudget(connectionId: string, tokens: TokenProvider): TokenProvider {
    const seen = (token: string) => {
      this.#budgetKeys.set(connectionId, tokens.budgetKey(token));
      return token;
    };
    return {
      getAccessToken: async () => seen(await tokens.getAccessToken()),
      invalidate: async (token) => seen(await tokens.invalidate(token)),
      budgetKey: (token) => tokens.budgetKey(token),
    };
  }

  /**
   * State written before connections existed belongs to the default connection and to the one
   * organization it synced into (`api.organizationId`, or the only one its token saw): stamped so
   * once per process, when that organization is known.
   */
  #adoptUnstamped(connection: ApiConnection, visible: readonly string[] | undefined): Promise<void> {
    const adopt = this.#props.onDefaultOrganization;
    // The organization of the default connection's sources that name none, once it is settled.
    const { organizationId } = settleOrganization(undefined, connection, visible);
    if (!adopt || organizationId === null) return Promise.resolve();
    this.#adopted ??= adopt(organizationId).catch((error: unknown) => {
      this.#adopted = undefined;
      throw error;
    });
    return this.#adopted;
  }
}

async function listOrganizations(client: ReceivablesClient): Promise<string[]> {
  const ids: string[] = [];
  for await (const organization of client.organizations.list({ first: PAGE })) ids.push(organization.id);
  return ids;
}

/**
 * The scopes of the sources as far as the state DB and the configuration tell, without the API:
 * for the state-only commands (`failures`, `status`). A source's organization is the one its
 * configuration names, else the one its last run recorded, else not known yet (the state written
 * before it was: `UNSTAMPED_SCOPE`'s organization).
 */
export async function recordedScopes(db: StateDb, loaded: LoadedConfig): Promise<StateScopes> {
  const connections = apiConnections(loaded);
  const rows = await db
    .selectFrom('runs')
    .select(['source_id', 'connection_id', 'organization_id'])
    .where('organization_id', '<>', '')
    .orderBy('id', 'desc')
    .limit(10_000)
    .execute();
  const scopes = new Map<string, StateScope>();
  for (const source of loaded.config.sources) {
    const connectionId = connectionIdOf(source);
    const named = namedOrganization(source, connections.get(connectionId));
    const ran = rows.find((r) => r.source_id === source.id && r.connection_id === connectionId);
    scopes.set(source.id, { connectionId, organizationId: named?.id ?? ran?.organization_id ?? '' });
  }
  return { of: (sourceId) => scopes.get(sourceId) ?? UNSTAMPED_SCOPE };
}

/** A connection without an API base URL: what to set (the default connection's from the environment). */
export function noApiToSyncTo(connectionId: string): AppError {
  return new AppError(
    'API_BASE_URL_MISSING',
    connectionId === DEFAULT_CONNECTION
      ? 'no API to sync to: set RECEIVABLES_BASE_URL (or api.baseUrl), or try `npm run demo` against a local sandbox'
      : `no API to sync to for connection "${connectionId}": set its baseUrl under connections`,
  );
}
