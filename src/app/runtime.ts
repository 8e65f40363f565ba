import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createTokenProvider } from '../api/auth/token-provider-factory.js';
import { ReceivablesClient } from '../api/client.js';
import { createRateLimiter } from '../api/rate-limit/create-rate-limiter.js';
import type { MeteredRateLimiter } from '../api/rate-limit/types.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { AppError, messageOf } from '../domain/errors.js';
import { watchConnection } from '../jobs/redis-connection.js';
import { createLogger } from '../logging/logger.js';
import { createSourceFactory } from '../sources/create-source.js';
import { migrateToLatest, openStateDatabase, type StateDatabase } from '../state/database.js';
import { DropFilesRepository } from '../state/drop-files.js';
import { type SyncStateRepos, syncStateRepos } from '../state/repositories.js';
import type { ProgressEvent } from '../sync/pass-scope.js';
import type { SyncState } from '../sync/ports.js';
import { SyncService } from '../sync/sync-service.js';
import { ClientSyncApi } from './sync-api.js';

/** What the state-only commands need (`failures`, `status`, `migrate`). */
export interface StateRuntime {
  loaded: LoadedConfig;
  logger: Logger;
  database: StateDatabase;
  repos: SyncStateRepos;
  close(): Promise<void>;
}

/** Everything a sync needs, built once; `close()` releases it in reverse order of creation. */
export interface SyncRuntime extends StateRuntime {
  client: ReceivablesClient;
  limiter: MeteredRateLimiter;
  organizationId: string;
  redis: Redis | undefined;
}

export async function openStateRuntime(
  loaded: LoadedConfig,
  logger = createLogger({ level: loaded.config.log.level }),
): Promise<StateRuntime> {
  let database: StateDatabase;
  try {
    database = await openStateDatabase({
      ...loaded.config.state,
      onIdleError: (error) =>
        logger.warn(
          { event: 'state-db.connection-lost', err: error.message },
          'state DB connection lost: reconnecting on next use',
        ),
    });
  } catch (error) {
    throw new AppError('STATE_DB_UNAVAILABLE', `cannot open the state DB: ${messageOf(error)}`, {
      kind: 'infrastructure',
      retryable: true,
      cause: error,
    });
  }
  const { db } = database;
  return {
    loaded,
    logger,
    database,
    repos: syncStateRepos(db),
    close: () => database.close(),
  };
}

/** `migrate`: applies the pending migrations of the configured state DB; returns their names. */
export async function migrateState(loaded: LoadedConfig): Promise<{ kind: string; applied: string[] }> {
  const { state } = loaded.config;
  const database = await openStateDatabase({ ...state, migrate: false });
  try {
    return { kind: database.kind, applied: await migrateToLatest(database.db, state.schema) };
  } finally {
    await database.close();
  }
}

/**
 * The composition root of a sync: logger, state DB, Redis (when configured), the shared rate
 * limiter, the token provider and the API client; then the organization to sync into.
 */
export interface SyncRuntimeOptions {
  /** The fetch of every API and token-endpoint call (`--trace-http` records them through it). */
  fetch?: typeof fetch | undefined;
}

export async function openSyncRuntime(
  loaded: LoadedConfig,
  logger?: Logger,
  options: SyncRuntimeOptions = {},
): Promise<SyncRuntime> {
  const { config, secrets } = loaded;
  if (!config.api.baseUrl) {
    throw new AppError(
      'API_BASE_URL_MISSING',
      'no API to sync to: set RECEIVABLES_BASE_URL (or api.baseUrl), or try `npm run demo` against a local sandbox',
      { kind: 'config' },
    );
  }
  const state = await openStateRuntime(loaded, logger);
  const closers: Array<() => Promise<unknown>> = [state.close];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch(() => {});
  };
  try {
    await holdRunLocks(state);
    closers.push(() => state.repos.runs.releaseRunLocks());
    const redis = config.queue.redisUrl
      ? new Redis(config.queue.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false })
      : undefined;
    // The limiter's and the token refresh's connection: an outage is logged once, never unhandled.
    if (redis) watchConnection(redis, state.logger);
    if (redis) closers.push(() => redis.quit());
    const limiter = createRateLimiter({ redis, logger: state.logger });
    closers.push(() => limiter.close());
    const tokens = createTokenProvider({
      config,
      secrets,
      log: state.logger,
      ...(redis ? { redis } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const client = new ReceivablesClient({
      baseUrl: config.api.baseUrl,
      fetch: options.fetch,
      tokens,
      limiter,
      logger: state.logger,
      timeoutMs: config.api.timeoutSeconds * 1000,
      concurrency: config.api.concurrency,
      compat: config.api.compat,
    });
    closers.push(() => client.close());
    const organizationId = config.api.organizationId ?? (await soleOrganization(client));
    return { ...state, client, limiter, organizationId, redis, close };
  } catch (error) {
    await close();
    throw restatedForTerminal(error, config.api.baseUrl);
  }
}

/**
 * Runs started from here hold a lock that says their process is alive (see `RunsRepository`), and
 * the runs left `running` by processes that are gone (killed, crashed) are closed as `interrupted`
 * now; a pass of a source also closes its source's before it starts.
 */
async function holdRunLocks(state: StateRuntime): Promise<void> {
  const { runs } = state.repos;
  runs.holdRunLocks();
  try {
    const interrupted = await runs.interruptAbandoned();
    if (interrupted.length > 0)
      state.logger.warn(
        { event: 'runs.interrupted', runs: interrupted },
        'runs left running by a process that is gone: marked interrupted',
      );
  } catch (error) {
    state.logger.warn({ err: messageOf(error) }, 'cannot close the runs of processes that are gone');
  }
}

/**
 * An error of opening the runtime, as the terminal shows it: a fault of the API (or of the way to
 * it) names the API; refused credentials already say what to run; anything else as it is.
 */
function restatedForTerminal(error: unknown, baseUrl: string): unknown {
  if (!(error instanceof AppError) || error.code === 'LOGIN_REQUIRED' || error.kind !== 'infrastructure')
    return error;
  return new AppError(error.code, `cannot reach the API at ${baseUrl}: ${error.message}`, {
    kind: error.kind,
    retryable: error.retryable,
    status: error.status,
    cause: error,
  });
}

/**
 * Checks that the API answers and accepts the token, with one authenticated read (`GET
 * /organizations?first=1`, one request of the quota): a pass that finds nothing to sync would
 * otherwise never learn that the token is refused or the API gone.
 */
export async function checkAccess(runtime: SyncRuntime): Promise<void> {
  await runtime.client.organizations.listPage({ first: 1 });
}

/** RECEIVABLES_ORGANIZATION_ID is optional when the token sees exactly one organization. */
async function soleOrganization(client: ReceivablesClient): Promise<string> {
  const page = await client.organizations.listPage({ first: 2 });
  if (page.nodes.length === 1) return page.nodes[0]!.id;
  throw new AppError(
    'ORGANIZATION_UNKNOWN',
    page.nodes.length === 0
      ? 'the token sees no organization'
      : 'the token sees several organizations: set RECEIVABLES_ORGANIZATION_ID (or api.organizationId)',
    { kind: 'config' },
  );
}

/** The sync use cases over a runtime: what `sync`, `failures retry`, `demo` and the worker call. */
export function syncServiceOf(
  runtime: SyncRuntime,
  sources: readonly SourceConfig[],
  onProgress?: (event: ProgressEvent) => void,
): SyncService {
  const state: SyncState = runtime.repos;
  return new SyncService({
    sources,
    api: new ClientSyncApi(runtime.client, runtime.organizationId),
    state,
    logger: runtime.logger,
    sourceFactory: createSourceFactory({
      logger: runtime.logger,
      cursors: runtime.repos.cursors,
      ledger: new DropFilesRepository(runtime.database.db),
      env: runtime.loaded.env,
    }),
    ...(onProgress ? { onProgress } : {}),
  });
}
