import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { resolveAlertTargets } from '../alerts/targets.js';
import { connectionIdOf } from '../config/connections.js';
import { type LoadedConfig, requireSources } from '../config/load.js';
import { resolveCredentials } from '../dashboard/credentials.js';
import { lastReconciliations } from '../dashboard/reconciliation-routes.js';
import type { RunningDashboard } from '../dashboard/server.js';
import { AppError } from '../domain/errors.js';
import { settlesWithin } from '../domain/settle.js';
import { BullAlertQueue } from '../jobs/alert-queue.js';
import { closeAlertWorker, startAlertWorker } from '../jobs/alert-worker.js';
import { BullSyncQueues } from '../jobs/queues.js';
import { ReconcileSchedules } from '../jobs/reconcile-schedules.js';
import {
  closeConnection,
  openQueueConnection,
  waitForRedis,
  warnUnlessNoEviction,
} from '../jobs/redis-connection.js';
import { SourceSchedules } from '../jobs/schedules.js';
import { SourceLock } from '../jobs/source-lock.js';
import { createSyncProcessor } from '../jobs/sync-processor.js';
import { closeSyncWorker, startSyncWorker } from '../jobs/sync-worker.js';
import { type WorkerSettings, workerSettingsOf } from '../jobs/worker-settings.js';
import { createLogger } from '../logging/logger.js';
import { SyncMetrics } from '../metrics/sync-metrics.js';
import { PausedSources } from '../state/paused-sources.js';
import { RUN_SHUT_DOWN } from '../state/runs.js';
import { SourcePasses } from '../state/source-passes.js';
import { withStateErrors } from '../state/state-errors.js';
import { alertsConfigOf } from './alerting.js';
import { watchConnections } from './connection-budgets.js';
import { startDashboardServer } from './dashboard.js';
import { reconcileWith } from './reconcile.js';
import { openSyncRuntime, type SyncRuntime, syncServiceOf } from './runtime.js';

export interface WorkerOptions {
  /** Default: a logger at `log.level` (default info) in `log.format`. */
  logger?: Logger;
  /** Replaces settings read from the configuration (a test's own queue prefix, attempts...). */
  settings?: Partial<WorkerSettings>;
  /** Serve the dashboard in this process (default true; a port in use is a warning, not an error). */
  dashboard?: boolean;
  /** How long Redis may take to answer at start. Default 10 s. */
  redisTimeoutMs?: number;
}

export interface WorkerDaemonProps {
  loaded: LoadedConfig;
  settings: WorkerSettings;
  logger: Logger;
  metrics: SyncMetrics;
  dashboard: boolean;
  redisTimeoutMs?: number | undefined;
}

export interface RunningWorkerDaemon {
  settings: WorkerSettings;
  queues: BullSyncQueues;
  dashboard: RunningDashboard | null;
  /** The sources with a schedule. */
  scheduled: string[];
  /** The sources with a reconciliation schedule (`reconcile.schedule`). */
  reconcileScheduled: string[];
  /**
   * Stops everything in reverse order of start. Idempotent. `jobsLeft`: jobs were still running at
   * the shutdown limit, and the parts after the worker (queues, runtime, connection) were left open
   * so the running pass does not fail half-way on a closed DB: the caller must end the process now;
   * the jobs resume in another worker once their lock expires, as after a crash. Their runs are
   * closed first, as `interrupted` with the error `shut down`.
   */
  close(): Promise<{ jobsLeft: boolean }>;
  /**
   * Closes the runs of the passes in progress in this process as `interrupted` (`shut down`), for an
   * exit that cannot wait for them (a second signal), waiting at most `limitMs` (default 5 s).
   * Returns their ids (none when the limit passed first); never throws.
   */
  interruptRuns(limitMs?: number): Promise<string[]>;
}

/** Each part of the daemon, closed in reverse order of start; resolving `false` stops the closing there. */
interface Closer {
  name: string;
  close(): Promise<unknown>;
}

/** How long a part other than the worker may take to close before it is left behind. */
const CLOSE_LIMIT_MS = 5000;

/**
 * `worker` as it runs in production (and in the browser test): settings from the configuration,
 * the dashboard's credentials checked before anything starts, the sync counted by the metrics the
 * dashboard serves.
 *
 * @throws AppError of kind `config` (no Redis, invalid schedules), DashboardConfigError, RedisUnavailableError,
 *   or what opening the sync runtime throws (state DB, API).
 */
export async function startWorker(
  loaded: LoadedConfig,
  options: WorkerOptions = {},
): Promise<RunningWorkerDaemon> {
  const base = workerSettingsOf(loaded.config);
  if (!base)
    throw new AppError('WORKER_REDIS_MISSING', '`worker` needs Redis: set REDIS_URL (or queue.redisUrl)', {
      kind: 'config',
    });
  requireSources(loaded);
  const problems = [
    ...SourceSchedules.problems(loaded.config.sources),
    ...ReconcileSchedules.problems(loaded.config.sources),
  ];
  if (problems.length > 0)
    throw new AppError(
      'SCHEDULE_INVALID',
      `invalid schedules:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
      {
        kind: 'config',
      },
    );
  const dashboard = options.dashboard ?? true;
  if (dashboard)
    resolveCredentials({
      user: loaded.secrets.dashboardUser,
      password: loaded.secrets.dashboardPassword,
      host: loaded.config.dashboard.host,
    });
  // A daemon: its info lines are its output, on a terminal too (unless log.level says otherwise).
  const logger =
    options.logger ??
    createLogger({ level: loaded.config.log.level ?? 'info', format: loaded.config.log.format });
  return startWorkerDaemon({
    loaded,
    settings: { ...base, ...options.settings },
    logger,
    metrics: new SyncMetrics({ processMetrics: true, logger }),
    dashboard,
    redisTimeoutMs: options.redisTimeoutMs,
  });
}

/**
 * Starts the worker daemon: the Redis connection of the queues (eviction policy checked), the
 * sync runtime, the queues, the BullMQ worker, the cron schedules, then the dashboard. `close()`
 * stops them in reverse order: dashboard, schedules, worker (running jobs get
 * `settings.shutdownMs`), queues, runtime (DB, API client, the runtime's Redis), connection.
 */
export async function startWorkerDaemon(props: WorkerDaemonProps): Promise<RunningWorkerDaemon> {
  const { loaded, settings, logger } = props;
  const closers: Closer[] = [];
  let runtime: SyncRuntime | undefined;
  const interruptRuns = async (limitMs = CLOSE_LIMIT_MS): Promise<string[]> => {
    if (!runtime) return [];
    let ids: string[] = [];
    const marking = runtime.repos.runs.interruptInProgress(RUN_SHUT_DOWN).then(
      (interrupted) => {
        ids = interrupted;
      },
      (error: Error) => logger.warn({ err: error.message }, 'cannot mark the runs in progress interrupted'),
    );
    await settlesWithin(marking, limitMs);
    if (ids.length > 0)
      logger.warn(
        { event: 'runs.interrupted', runs: ids },
        'runs in progress marked interrupted (shut down)',
      );
    return ids;
  };
  let closing: Promise<{ jobsLeft: boolean }> | undefined;
  const close = () => {
    closing ??= closeInReverse(closers, settings.shutdownMs, logger).then(async (result) => {
      // The jobs left run on until the process ends: their runs must not stay `running`.
      if (result.jobsLeft) await interruptRuns();
      return result;
    });
    return closing;
  };
  try {
    const connection = openQueueConnection({ url: settings.redisUrl, logger });
    closers.push({ name: 'redis', close: () => closeConnection(connection) });
    await waitForRedis(connection, settings.redisUrl, props.redisTimeoutMs ?? 10_000);
    await warnUnlessNoEviction(connection, logger);

    // Alerts go through a queue of their own (attempts, backoff), delivered by every worker process.
    const alertTargets = resolveAlertTargets(loaded.config.alerts, loaded.env);
    const alertSettings = alertsConfigOf(loaded.config);
    const alertQueue =
      alertTargets.length > 0
        ? new BullAlertQueue({
            connection,
            prefix: settings.prefix,
            attempts: alertSettings.attempts,
            backoffMs: alertSettings.backoffSeconds * 1000,
            logger,
          })
        : undefined;
    if (alertQueue) closers.push({ name: 'alert-queue', close: () => alertQueue.close() });

    const opened = await openSyncRuntime(loaded, logger, {
      alerts: alertQueue ? { transport: alertQueue, redisPrefix: settings.prefix } : undefined,
    });
    runtime = opened;
    closers.push({ name: 'runtime', close: () => opened.close() });
    // Each source's connection checked at start; each token's budget told to the dashboard.
    const watch = watchConnections({
      targets: opened.targets,
      sources: loaded.config.sources,
      redis: connection,
      prefix: settings.prefix,
      logger,
    });
    closers.push({ name: 'connections', close: () => watch.stop() });
    const paused = new PausedSources(opened.database.db);
    const isPaused = (sourceId: string) => paused.isPaused(sourceId);

    const queues = new BullSyncQueues({
      connection,
      settings,
      logger,
      connectionOf: (id) => connectionIdOf(loaded.config.sources.find((s) => s.id === id) ?? {}),
    });
    closers.push({ name: 'queues', close: () => queues.close() });
    // The alerts' queue shows next to the sync queue (bull-board, /metrics, the sync page).
    if (alertQueue) queues.show(alertQueue.queue as unknown as Queue);

    const { metrics } = props;
    metrics.watch({
      runtimeStats: () => {
        const api = opened.targets.stats();
        return { requests: api.requests.requests, limiter: opened.limiter.stats(), responses: api.responses };
      },
      sourceIds: loaded.config.sources.map((s) => s.id),
      reconciliations: lastReconciliations(opened.database.db),
    });
    const processor = createSyncProcessor({
      service: metrics.instrumentService(syncServiceOf(opened, loaded.config.sources)),
      sources: loaded.config.sources,
      lock: new SourceLock({ redis: connection, prefix: settings.prefix, ttlMs: settings.lockMs, logger }),
      // The passes as the state DB knows them: one per source still holds when Redis loses the lock.
      passes: withStateErrors(new SourcePasses(opened.database.db)),
      logger,
      isPaused,
      sourceBusyRetryMs: settings.sourceBusyRetryMs,
      // Under the source lock the processor holds: never during a pass of the same source.
      reconcile: (sourceId, options) => reconcileWith(opened, sourceId, options),
    });
    // Started before the sync worker, so closed after it: the alerts of the last passes still go out.
    if (alertQueue) {
      const alertWorker = await startAlertWorker({
        connection,
        prefix: settings.prefix,
        targets: alertTargets,
        timeoutMs: alertSettings.timeoutSeconds * 1000,
        logger,
      });
      closers.push({
        name: 'alert-worker',
        close: () => closeAlertWorker(alertWorker, CLOSE_LIMIT_MS - 500),
      });
    }
    const worker = await startSyncWorker({ connection, settings, processor, logger });
    closers.push({ name: 'worker', close: () => closeSyncWorker(worker, settings.shutdownMs, logger) });

    const schedules = new SourceSchedules({ sources: loaded.config.sources, queues, isPaused, logger });
    const scheduled = schedules.start();
    closers.push({ name: 'schedules', close: () => schedules.stop() });
    const reconcileSchedules = new ReconcileSchedules({
      sources: loaded.config.sources,
      queues,
      isPaused,
      logger,
    });
    const reconcileScheduled = reconcileSchedules.start();
    closers.push({ name: 'reconcile-schedules', close: () => reconcileSchedules.stop() });

    const dashboard = props.dashboard
      ? await servedUnlessPortTaken(
          () =>
            startDashboardServer({
              loaded,
              db: opened.database.db,
              queues,
              metrics,
              logger,
              budgetsFrom: settings,
            }),
          logger,
        )
      : null;
    if (dashboard) closers.push({ name: 'dashboard', close: () => dashboard.close() });

    return { settings, queues, dashboard, scheduled, reconcileScheduled, close, interruptRuns };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Several workers on one machine: the first serves the dashboard, the others only work. */
async function servedUnlessPortTaken(
  start: () => Promise<RunningDashboard>,
  logger: Logger,
): Promise<RunningDashboard | null> {
  try {
    return await start();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    logger.warn('dashboard port in use (another worker on this machine?): this worker serves no dashboard');
    return null;
  }
}

async function closeInReverse(
  closers: readonly Closer[],
  workerLimitMs: number,
  logger: Logger,
): Promise<{ jobsLeft: boolean }> {
  for (const closer of [...closers].reverse()) {
    // The worker bounds its own wait (running jobs); the margin covers closing its connections.
    const limit = closer.name === 'worker' ? workerLimitMs + 10_000 : CLOSE_LIMIT_MS;
    let result: unknown;
    const done = await settlesWithin(
      closer.close().then(
        (value) => {
          result = value;
        },
        (error: Error) => logger.warn({ part: closer.name, err: error.message }, 'close failed'),
      ),
      limit,
    );
    if (!done)
      logger.warn({ part: closer.name, limitMs: limit }, 'close did not finish in time: left behind');
    if (result === false) return { jobsLeft: true };
    logger.debug({ part: closer.name }, 'closed');
  }
  return { jobsLeft: false };
}
