import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { createTokenProvider } from '../api/auth/token-provider-factory.js';
import { ReceivablesClient } from '../api/client.js';
import { LoginRequiredError, ReceivablesError } from '../api/errors.js';
import { createRateLimiter } from '../api/rate-limit/create-rate-limiter.js';
import type { MeteredRateLimiter } from '../api/rate-limit/types.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { createLogger } from '../logging/logger.js';
import { createSource } from '../sources/create-source.js';
import { CursorsRepository } from '../state/cursors.js';
import { openStateDatabase, type StateDatabase } from '../state/database.js';
import { ClientSyncApi } from '../sync/client-adapter.js';
import type { ProgressEvent } from '../sync/context.js';
import { type SyncStateRepos, syncStateRepos } from '../sync/run-sync.js';
import { SyncService } from '../sync/sync-service.js';
import { CliError } from './errors.js';

/** What the state-only commands need (`failures`, `status`, `migrate`). */
export interface StateRuntime {
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
    database = await openStateDatabase(loaded.config.state);
  } catch (error) {
    throw new CliError(`cannot open the state DB: ${(error as Error).message}`);
  }
  const { db } = database;
  return {
    logger,
    database,
    repos: syncStateRepos(db),
    close: () => database.close(),
  };
}

/**
 * The composition root of a sync: logger, state DB, Redis (when configured), the shared rate
 * limiter, the token provider and the API client; then the organization to sync into.
 */
export async function openSyncRuntime(loaded: LoadedConfig, logger?: Logger): Promise<SyncRuntime> {
  const { config, secrets } = loaded;
  if (!config.api.baseUrl) {
    throw new CliError(
      'no API to sync to: set RECEIVABLES_BASE_URL (or api.baseUrl), or try `npm run demo` against a local sandbox',
    );
  }
  const state = await openStateRuntime(loaded, logger);
  const closers: Array<() => Promise<unknown>> = [state.close];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch(() => {});
  };
  try {
    const redis = config.queue.redisUrl
      ? new Redis(config.queue.redisUrl, { maxRetriesPerRequest: 3, lazyConnect: false })
      : undefined;
    if (redis) closers.push(() => redis.quit());
    const limiter = createRateLimiter({ redis, logger: state.logger });
    closers.push(() => limiter.close());
    const tokens = createTokenProvider({ config, secrets, log: state.logger, ...(redis ? { redis } : {}) });
    const client = new ReceivablesClient({
      baseUrl: config.api.baseUrl,
      tokens,
      limiter,
      logger: state.logger,
      timeoutMs: config.api.timeoutSeconds * 1000,
      concurrency: config.api.concurrency,
    });
    closers.push(() => client.close());
    const organizationId = config.api.organizationId ?? (await soleOrganization(client));
    return { ...state, client, limiter, organizationId, redis, close };
  } catch (error) {
    await close();
    if (error instanceof CliError) throw error;
    if (error instanceof LoginRequiredError) throw new CliError(error.message);
    if (error instanceof ReceivablesError)
      throw new CliError(`cannot reach the API at ${config.api.baseUrl}: ${error.message}`);
    throw error;
  }
}

/** RECEIVABLES_ORGANIZATION_ID is optional when the token sees exactly one organization. */
async function soleOrganization(client: ReceivablesClient): Promise<string> {
  const page = await client.organizations.listPage({ first: 2 });
  if (page.nodes.length === 1) return page.nodes[0]!.id;
  throw new CliError(
    page.nodes.length === 0
      ? 'the token sees no organization'
      : 'the token sees several organizations: set RECEIVABLES_ORGANIZATION_ID (or api.organizationId)',
  );
}

/** The sync use cases over a runtime: what `sync`, `failures retry`, `demo` and the worker call. */
export function syncServiceOf(
  runtime: SyncRuntime,
  sources: readonly SourceConfig[],
  onProgress?: (event: ProgressEvent) => void,
): SyncService {
  return new SyncService({
    sources,
    api: new ClientSyncApi(runtime.client, runtime.organizationId),
    state: runtime.repos,
    logger: runtime.logger,
    createSource: (config, options) =>
      createSource(config, { logger: runtime.logger, db: runtime.database.db, ...options }),
    resetCursors: async (sourceId) => {
      await new CursorsRepository(runtime.database.db).reset(sourceId);
    },
    ...(onProgress ? { onProgress } : {}),
  });
}
