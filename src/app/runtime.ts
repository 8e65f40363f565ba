import { join } from 'node:path';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AlertTransport } from '../alerts/ports.js';
import { resolveAlertTargets } from '../alerts/targets.js';
import { createRateLimiter } from '../api/rate-limit/create-rate-limiter.js';
import { type Flow, withFlow } from '../api/rate-limit/flow.js';
import type { MeteredRateLimiter } from '../api/rate-limit/types.js';
import type { RetryNotice } from '../api/requests.js';
import { connectionsUsedBy } from '../config/connections.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { AppError, errorCodeOf, messageOf } from '../domain/errors.js';
import { createLogger } from '../logging/logger.js';
import { createSourceFactory } from '../sources/create-source.js';
import type { SingerInput } from '../sources/singer/index.js';
import { DropFilesRepository } from '../state/drop-files.js';
import { checkFreeSpace } from '../state/embedded-space.js';
import { adoptUnstampedState, type StateScope, type StateScopes, UNSTAMPED_SCOPE } from '../state/scopes.js';
import type { ProgressEvent } from '../sync/pass-scope.js';
import type { SyncState } from '../sync/ports.js';
import { SyncService, type SyncUseCases } from '../sync/sync-service.js';
import { type Alerting, openAlerting, tellStartFailed, watchingPasses } from './alerting.js';
import { ApiTargets, noApiToSyncTo } from './api-targets.js';
import { openStateRuntime, type StateRuntime } from './state-runtime.js';

/** Everything a sync needs, built once; `close()` releases it in reverse order of creation. */
export interface SyncRuntime extends StateRuntime {
  /** Each source's connection, client and organization (docs/connections.md). */
  targets: ApiTargets;
  /** Each source's scope of the state DB, known once its target is resolved (`targets.of`). */
  scopes: StateScopes;
  limiter: MeteredRateLimiter;
  redis: Redis | undefined;
  /** Alerts (`alerts.*`) and the automatic pause; closing the runtime waits a few seconds for them. */
  alerting: Alerting;
}

/**
 * The composition root of a sync: logger, state DB, Redis (when configured), the shared rate
 * limiter, the token provider and the API client; then the organization to sync into.
 */
export interface SyncRuntimeOptions {
  /** The fetch of every API and token-endpoint call (`--trace-http` records them through it). */
  fetch?: typeof fetch | undefined;
  /**
   * Where alerts go: the worker's queue, and the prefix of its Redis keys (the alert throttle's
   * too). Default: delivered from this process (`sync --once`), throttled under `queue.prefix`.
   */
  alerts?: { transport: AlertTransport; redisPrefix: string } | undefined;
  /**
   * Resolve, while opening, the organization of the sources that name none (one listing of the
   * API; a refused token or an unreachable API fails the open). Default true; the worker passes
   * false: it opens through an API outage, and each source's pass resolves its own.
   */
  resolveOrganizations?: boolean | undefined;
  /**
   * Tell `run.failed` (no source) when the open fails. Default true; the worker passes false: it
   * retries, and tells a wait that lasts (`WorkerReadiness`).
   */
  tellStartFailure?: boolean | undefined;
  /** Told of each retry of an API request, from the start on (`sync --once` shows them on a terminal). */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

export async function openSyncRuntime(
  loaded: LoadedConfig,
  logger?: Logger,
  options: SyncRuntimeOptions = {},
): Promise<SyncRuntime> {
  const { config } = loaded;
  // A source's connection without an API (the default one without RECEIVABLES_BASE_URL) is found
  // before anything opens.
  const used = connectionsUsedBy(loaded, config.sources);
  for (const connection of used) {
    if (!connection.api.baseUrl) throw noApiToSyncTo(connection.id);
  }
  // A target whose URL variable is unset is a configuration error, found before anything opens.
  const alertTargets = resolveAlertTargets(config.alerts, loaded.env);
  // Not `options.fetch`: a `--trace-http` file must never hold a webhook URL.
  const alertsBase = { config, targets: alertTargets };
  // Each source's scope (connection, organization) keys its state once its target is resolved
  // (`targets.of`, before any state of the source is touched): read live by the repositories.
  const scopes = new Map<string, StateScope>();
  const liveScopes: StateScopes = { of: (sourceId) => scopes.get(sourceId) ?? UNSTAMPED_SCOPE };
  const tellStartFailure = options.tellStartFailure ?? true;
  const state = await openStateRuntime(loaded, logger, liveScopes).catch(async (error: unknown) => {
    if (tellStartFailure)
      await tellStartFailed({
        ...alertsBase,
        logger: logger ?? createLogger({ level: 'warn' }),
        redis: undefined,
        error,
      });
    throw error;
  });
  const closers: Array<() => Promise<unknown>> = [state.close];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch(() => {});
  };
  let redis: Redis | undefined;
  try {
    await holdRunLocks(state);
    closers.push(() => state.repos.runs.releaseRunLocks());
    if (config.queue.redisUrl) {
      // Loaded only when Redis is configured: `sync --once` and `status` without it never need them.
      const [ioredis, connections] = await Promise.all([
        import('ioredis'),
        import('../jobs/redis-connection.js'),
      ]);
      const opened = new ioredis.Redis(config.queue.redisUrl, {
        maxRetriesPerRequest: 3,
        lazyConnect: false,
      });
      redis = opened;
      // The limiter's and the token refresh's connection: an outage is logged once, never unhandled.
      connections.watchConnection(opened, state.logger);
      closers.push(() => connections.closeConnection(opened));
    }
    const alerting = openAlerting({
      ...alertsBase,
      db: state.database.db,
      redis,
      transport: options.alerts?.transport,
      redisPrefix: options.alerts?.redisPrefix,
      logger: state.logger,
    });
    closers.push(() => alerting.close());
    const limiter = createRateLimiter({ redis, logger: state.logger });
    closers.push(() => limiter.close());
    const targets = new ApiTargets({
      loaded,
      logger: state.logger,
      limiter,
      alerting,
      redis,
      fetch: options.fetch,
      onRetry: options.onRetry,
      onScope: (sourceId, scope) => scopes.set(sourceId, scope),
      onDefaultOrganization: async (organizationId) => {
        const stamped = await adoptUnstampedState(state.database.db, organizationId);
        const total = Object.values(stamped).reduce((a, b) => a + b, 0);
        if (total > 0)
          state.logger.info(
            { event: 'state.scoped', organizationId, rows: stamped },
            'state of the default connection stamped with its organization',
          );
      },
    });
    closers.push(() => targets.close());
    // A source whose organization the configuration leaves out syncs into the only one its token
    // sees. With one connection, that is found now (one read), so a refused token stops the start,
    // and so does a token seeing several organizations when no source names one;
    // when some do, it is the unnamed sources' own setting: their passes stop on it while the
    // sources that name theirs sync. With several connections, each source finds it in its own
    // pass, so one connection's fault never stops the others'. Named organizations cost no request.
    // The worker skips this (`resolveOrganizations: false`): it starts through an API outage, and
    // each source's first pass that reaches the API settles its organization.
    if (used.length === 1 && (options.resolveOrganizations ?? true)) {
      const someNamed = config.sources.some((source) => targets.namesOrganization(source));
      for (const source of config.sources) {
        if (targets.namesOrganization(source)) continue;
        await targets.of(source).catch((error: unknown) => {
          if (!(someNamed && errorCodeOf(error) === 'ORGANIZATION_UNKNOWN')) throw error;
        });
      }
    }
    return { ...state, scopes: liveScopes, targets, limiter, redis, alerting, close };
  } catch (error) {
    const restated = restatedForTerminal(error, config.api.baseUrl ?? '');
    // Both within the few seconds alerts may take (the throttle's Redis command is sent at once).
    await Promise.all([
      tellStartFailure
        ? tellStartFailed({ ...alertsBase, logger: state.logger, redis, error: restated })
        : undefined,
      close(),
    ]);
    throw restated;
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
  // Restated: its code, kind and retryability kept (the API's own code included).
  return new AppError(error, `cannot reach the API at ${baseUrl}: ${error.message}`, {
    status: error.status,
    cause: error,
  });
}

/**
 * Checks, before a pass, that each source's API answers and accepts its token and that the token
 * sees the source's organization: one authenticated read per connection (`GET /organizations`,
 * also what resolves the organizations), so a pass that finds nothing to sync still learns that a
 * token is refused or an API gone.
 */
export async function checkAccess(runtime: SyncRuntime, sources: readonly SourceConfig[]): Promise<void> {
  await runtime.targets.verify(sources);
}

/** A source's flow in its token's rate budget: its id, and its `weight` (default 1). */
export const flowOf = (config: Pick<SourceConfig, 'id' | 'weight'>): Flow => ({
  id: config.id,
  weight: config.weight ?? 1,
});

/** The sync use cases over a runtime: what `sync`, `failures retry`, `demo` and the worker call. */
export function syncServiceOf(
  runtime: SyncRuntime,
  sources: readonly SourceConfig[],
  onProgress?: (event: ProgressEvent) => void,
  singerInput?: SingerInput,
): SyncUseCases {
  const state: SyncState = runtime.repos;
  const service = new SyncService({
    sources,
    api: async (config) => (await runtime.targets.of(config)).api,
    // Each source's requests are its own flow of its token's budget (fair queuing, `weight`).
    around: (config, pass) => withFlow(flowOf(config), pass),
    state,
    logger: runtime.logger,
    // The embedded DB hangs on a full disk instead of failing: each batch first checks the space.
    ...(runtime.database.kind === 'embedded' && runtime.loaded.config.state.minFreeMb > 0
      ? {
          guard: () =>
            checkFreeSpace(runtime.loaded.config.state.dataDir, runtime.loaded.config.state.minFreeMb),
        }
      : {}),
    sourceFactory: createSourceFactory({
      logger: runtime.logger,
      cursors: runtime.repos.cursors,
      ledger: new DropFilesRepository(runtime.database.db),
      env: runtime.loaded.env,
      workDir: join(runtime.loaded.config.state.dataDir, 'singer'),
      ...(singerInput ? { singerInput } : {}),
    }),
    ...(onProgress ? { onProgress } : {}),
  });
  // Each pass's end is watched: alerts, and the automatic pause after failed runs.
  return watchingPasses(service, runtime.alerting.watch);
}
