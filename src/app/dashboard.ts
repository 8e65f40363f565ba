import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { connectionIdOf } from '../config/connections.js';
import type { LoadedConfig } from '../config/load.js';
import { dashboardConnectionsOf } from '../dashboard/connection-groups.js';
import { resolveCredentials } from '../dashboard/credentials.js';
import type { ReadinessCheck } from '../dashboard/deps.js';
import type { DropUploads } from '../dashboard/drop-uploads.js';
import type { FrontServer } from '../dashboard/front-server.js';
import { lastReconciliations } from '../dashboard/reconciliation-routes.js';
import { type RunningDashboard, startDashboard } from '../dashboard/server.js';
import { systemClock } from '../domain/clock.js';
import { BullSyncQueues } from '../jobs/queues.js';
import { closeConnection, openQueueConnection, redactedUrl, waitForRedis } from '../jobs/redis-connection.js';
import type { SyncQueues } from '../jobs/types.js';
import { type WorkerSettings, workerSettingsOf } from '../jobs/worker-settings.js';
import { SyncMetrics } from '../metrics/sync-metrics.js';
import type { StateDb } from '../state/database.js';
import { lastSuccessfulRuns } from '../state/status-queries.js';
import { openTokenBudgets } from './dashboard-budgets.js';
import { runDoctor } from './doctor.js';
import { failuresCsv } from './failures-csv.js';
import { dashboardProfileOf } from './source-profiles.js';
import { openStateRuntime } from './state-runtime.js';

export interface DashboardServerProps {
  loaded: LoadedConfig;
  db: StateDb;
  /** Where actions are queued; without it the dashboard is read-only. */
  queues: SyncQueues | undefined;
  /** Served on `/metrics`; it is told to read the queues and the last successes from here. */
  metrics: SyncMetrics;
  logger: Logger;
  /** Default: `dashboard.host` / `dashboard.port` of the configuration (DASHBOARD_HOST/PORT). */
  host?: string | undefined;
  port?: number | undefined;
  /**
   * Where the workers publish their token budgets (a worker passes its own settings); default
   * `queue.redisUrl` / `queue.prefix` of the configuration. Without Redis the quota is unknown.
   */
  budgetsFrom?: Pick<WorkerSettings, 'redisUrl' | 'prefix'> | undefined;
  /** The worker's server, listening since its start: it serves the dashboard instead of a new listener. */
  front?: FrontServer | undefined;
  /** Checked by `/readyz` besides the state DB and Redis (the worker's: the API). */
  readiness?: readonly ReadinessCheck[] | undefined;
  /** The uploads to CSV sources (the worker's: its dry run needs the API); none without. */
  uploads?: DropUploads | undefined;
}

/**
 * The one wiring of the dashboard, whoever serves it (`worker`, `dashboard`, the browser test):
 * credentials from DASHBOARD_USER/PASSWORD (required beyond loopback), the state DB, the queues,
 * the metrics; then it listens.
 *
 * @throws DashboardConfigError without credentials beyond loopback, or with half a pair.
 */
export async function startDashboardServer(props: DashboardServerProps): Promise<RunningDashboard> {
  const { config, secrets } = props.loaded;
  const host = props.host ?? config.dashboard.host;
  const credentials = resolveCredentials({
    user: secrets.dashboardUser,
    password: secrets.dashboardPassword,
    host,
  });
  const { queues } = props;
  props.metrics.watch({
    ...(queues ? { queues: () => queues.queues } : {}),
    lastSuccess: lastSuccessfulRuns(props.db),
    reconciliations: lastReconciliations(props.db),
    sourceIds: config.sources.map((s) => s.id),
  });
  // Each token's budget, as the workers publish it (queue.prefix) and the limiter keeps it (the
  // limiter is created with createRateLimiter's default prefix, whatever queue.prefix says).
  const settings = props.budgetsFrom ?? workerSettingsOf(config);
  const budgets = settings
    ? openTokenBudgets({
        redisUrl: settings.redisUrl,
        prefix: settings.prefix,
        limiterPrefix: 'receivables-sync',
        logger: props.logger,
      })
    : undefined;
  const running = await startDashboard(
    {
      sources: config.sources,
      describeSource: dashboardProfileOf,
      db: props.db,
      queues,
      credentials,
      host,
      queueAdmin: config.dashboard.queueAdmin,
      trustProxy: config.dashboard.trustProxy,
      testConnection: () => runDoctor(props.loaded),
      failuresCsv: (source, kind) => failuresCsv(props.db, source, kind),
      metrics: props.metrics,
      clock: systemClock,
      logger: props.logger,
      connections: dashboardConnectionsOf(props.loaded),
      tokenBudgets: budgets?.read,
      ...(props.readiness ? { readiness: props.readiness } : {}),
      ...(props.uploads ? { uploads: props.uploads } : {}),
    },
    props.front ?? props.port ?? config.dashboard.port,
  ).catch(async (error: unknown) => {
    await budgets?.close();
    throw error;
  });
  if (!budgets) return running;
  return {
    ...running,
    close: async () => {
      await running.close();
      await budgets.close();
    },
  };
}

/**
 * `dashboard`: the dashboard alone, over the state DB and (with REDIS_URL) the queues the workers
 * take jobs from. `close()` stops it and releases what it opened, in reverse order.
 */
export async function openStandaloneDashboard(
  loaded: LoadedConfig,
  where: { host?: string | undefined; port?: number | undefined } = {},
): Promise<RunningDashboard> {
  // Checked before anything is opened, so a missing password fails fast.
  resolveCredentials({
    user: loaded.secrets.dashboardUser,
    password: loaded.secrets.dashboardPassword,
    host: where.host ?? loaded.config.dashboard.host,
  });
  const runtime = await openStateRuntime(loaded);
  const closers: Array<() => Promise<unknown>> = [runtime.close];
  const close = async () => {
    for (const fn of closers.reverse()) await fn().catch(() => {});
  };
  try {
    const { logger } = runtime;
    const settings = workerSettingsOf(loaded.config);
    let queues: BullSyncQueues | undefined;
    if (settings) {
      const connection: Redis = openQueueConnection({
        url: settings.redisUrl,
        logger,
        name: 'receivables-sync-dashboard',
      });
      closers.push(() => closeConnection(connection));
      await waitForRedis(connection, settings.redisUrl, 5000).catch((error: Error) =>
        logger.warn(
          { err: error.message, redis: redactedUrl(settings.redisUrl) },
          'Redis not reachable yet: actions wait for it',
        ),
      );
      const bull = new BullSyncQueues({
        connection,
        settings,
        logger,
        connectionOf: (id) => connectionIdOf(loaded.config.sources.find((s) => s.id === id) ?? {}),
      });
      queues = bull;
      closers.push(() => bull.close());
    } else {
      logger.warn('no REDIS_URL: the dashboard is read-only (its actions queue jobs for the worker)');
    }
    const dashboard = await startDashboardServer({
      loaded,
      db: runtime.database.db,
      queues,
      metrics: new SyncMetrics({ processMetrics: true, logger }),
      logger,
      host: where.host,
      port: where.port,
    });
    closers.push(() => dashboard.close());
    return { ...dashboard, close };
  } catch (error) {
    await close();
    throw error;
  }
}
