import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { resolveAlertTargets } from '../alerts/targets.js';
import { type LoadedConfig, requireSources } from '../config/load.js';
import { resolveCredentials } from '../dashboard/credentials.js';
import { type FrontServerProps, listenFront } from '../dashboard/front-server.js';
import type { RunningDashboard } from '../dashboard/server.js';
import { buildStartingApp } from '../dashboard/starting-app.js';
import { AppError } from '../domain/errors.js';
import { settlesWithin } from '../domain/settle.js';
import type { BullSyncQueues } from '../jobs/queues.js';
import { ReconcileSchedules } from '../jobs/reconcile-schedules.js';
import { closeConnection, openQueueConnection, warnUnlessNoEviction } from '../jobs/redis-connection.js';
import { SourceSchedules } from '../jobs/schedules.js';
import { type WorkerSettings, workerSettingsOf } from '../jobs/worker-settings.js';
import { createLogger } from '../logging/logger.js';
import type { SyncMetrics } from '../metrics/sync-metrics.js';
import { RUN_SHUT_DOWN } from '../state/runs.js';
import { ALERTS_CLOSE_MS, alertsConfigOf, startAlerts } from './alerting.js';
import type { SyncRuntime } from './runtime.js';
import { CLOSE_LIMIT_MS, type Closer, closeInReverse } from './worker-closers.js';
import { WorkerReadiness } from './worker-readiness.js';
import { untilOpened, untilRedisAnswers, WorkerStartStoppedError } from './worker-startup.js';

export interface WorkerOptions {
  /** Default: a logger at `log.level` (default info) in `log.format`. */
  logger?: Logger;
  /** Replaces settings read from the configuration (a test's own queue prefix, attempts...). */
  settings?: Partial<WorkerSettings>;
  /** Serve the dashboard in this process (default true; a port in use is a warning, not an error). */
  dashboard?: boolean;
}

export interface WorkerDaemonProps {
  loaded: LoadedConfig;
  settings: WorkerSettings;
  logger: Logger;
  /** Default: a new one with the process's metrics, made once the worker's parts start. */
  metrics?: SyncMetrics | undefined;
  dashboard: boolean;
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

/**
 * A worker from the moment it serves `/healthz`: what `launchWorker` returns at once, whatever
 * Redis, the state DB and the API do.
 */
export interface WorkerLaunch {
  settings: WorkerSettings;
  /** Where the dashboard, `/healthz` and `/readyz` answer from now on; null without one. */
  dashboardUrl: string | null;
  /** What the worker waits for (`/readyz`); `ready` once Redis, the state DB and the API answered. */
  readiness: WorkerReadiness;
  /**
   * The daemon, once Redis and the state DB answered (it waits through their outages, retrying
   * with backoff, and does not wait for the API). Rejects with what no wait can heal (a
   * configuration error, a failed migration), once what it opened is closed; or with
   * `WORKER_START_STOPPED` when `close()` came first.
   */
  started: Promise<RunningWorkerDaemon>;
  close: RunningWorkerDaemon['close'];
  interruptRuns: RunningWorkerDaemon['interruptRuns'];
}

/**
 * `worker` as it runs in production (and in the browser test), resolved once it runs: see
 * `launchWorker`, which this awaits (`started`).
 *
 * @throws what `launchWorker` throws, or what `started` rejects with.
 */
export async function startWorker(
  loaded: LoadedConfig,
  options: WorkerOptions = {},
): Promise<RunningWorkerDaemon> {
  const launch = await launchWorker(loaded, options);
  return launch.started;
}

/**
 * `worker` as it runs in production: settings from the configuration, the dashboard's credentials
 * and the schedules checked before anything starts (these throw: AppError of kind `config`,
 * DashboardConfigError), then `/healthz` served at once and the rest started as its dependencies
 * answer (`started`), the sync counted by the metrics the dashboard serves.
 */
export async function launchWorker(loaded: LoadedConfig, options: WorkerOptions = {}): Promise<WorkerLaunch> {
  const base = workerSettingsOf(loaded.config);
  if (!base)
    throw new AppError('WORKER_REDIS_MISSING', '`worker` needs Redis: set REDIS_URL (or queue.redisUrl)');
  requireSources(loaded);
  const problems = [
    ...SourceSchedules.problems(loaded.config.sources),
    ...ReconcileSchedules.problems(loaded.config.sources),
  ];
  if (problems.length > 0)
    throw new AppError(
      'SCHEDULE_INVALID',
      `invalid schedules:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
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
    createLogger({
      level: loaded.config.log.level ?? 'info',
      format: loaded.config.log.format,
      color: loaded.config.log.color,
    });
  return launchWorkerDaemon({
    loaded,
    settings: { ...base, ...options.settings },
    logger,
    dashboard,
  });
}

/**
 * Launches the worker daemon: the readiness and the Redis connection of the queues, then the
 * dashboard's server with the starting app (`/healthz`, `/readyz`), at once. In the background
 * (`started`): Redis and the sync runtime (state DB, API client), each waited for with backoff;
 * then the queues, the BullMQ workers, the cron schedules, the dashboard itself, and the check of
 * the connections (the API). `close()` stops them in reverse order: dashboard, schedules, worker
 * (running jobs get `settings.shutdownMs`), queues, runtime (DB, API client, the runtime's Redis),
 * connection; a start still waiting is stopped first.
 */
export async function launchWorkerDaemon(props: WorkerDaemonProps): Promise<WorkerLaunch> {
  const { loaded, settings, logger } = props;
  const closers: Closer[] = [];
  const stopping = new AbortController();
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
  let starting: Promise<unknown> = Promise.resolve();
  let closing: Promise<{ jobsLeft: boolean }> | undefined;
  const close = () => {
    closing ??= (async () => {
      // A start still waiting stops; an attempt under way (opening the state DB) ends first.
      stopping.abort();
      await settlesWithin(starting, 2 * CLOSE_LIMIT_MS);
      const result = await closeInReverse(closers, settings.shutdownMs, logger);
      // The jobs left run on until the process ends: their runs must not stay `running`.
      if (result.jobsLeft) await interruptRuns();
      return result;
    })();
    return closing;
  };

  const alertSettings = alertsConfigOf(loaded.config);
  const alertTargets = resolveAlertTargets(loaded.config.alerts, loaded.env);
  const readinessAlerts =
    alertTargets.length > 0
      ? startAlerts({ config: loaded.config, targets: alertTargets, logger })
      : undefined;
  const readiness = new WorkerReadiness({
    logger,
    alerts: readinessAlerts,
    notReadyMs: alertSettings.notReadyMinutes * 60_000,
    repeatMs: alertSettings.repeatMinutes * 60_000,
  });
  closers.push({
    name: 'readiness',
    close: async () => {
      readiness.close();
      await readinessAlerts?.close(ALERTS_CLOSE_MS);
    },
  });
  const connection = openQueueConnection({ url: settings.redisUrl, logger });
  closers.push({ name: 'redis', close: () => closeConnection(connection) });
  // Served from now on: the probes answer while the rest waits for its dependencies.
  const front = props.dashboard
    ? await servedUnlessPortTaken(
        () => listenFront(startingServer(props, readiness, connection)),
        logger,
      ).catch(async (error: unknown) => {
        await close();
        throw error;
      })
    : null;
  if (front) {
    closers.push({ name: 'front', close: () => front.close() });
    logger.info(
      { event: 'worker.serving', url: front.url },
      'dashboard listening (/healthz, /readyz; the pages once the worker started)',
    );
  }

  const start = async (): Promise<RunningWorkerDaemon> => {
    const { signal } = stopping;
    // Loaded once /healthz answers: most of the worker's loading time.
    const [{ openAlertQueue, startWorkerParts }, { openSyncRuntime }] = await Promise.all([
      import('./worker-parts.js'),
      import('./runtime.js'),
    ]);
    const alertQueue = openAlertQueue({ loaded, settings, logger, connection, targets: alertTargets });
    if (alertQueue) closers.push({ name: 'alert-queue', close: () => alertQueue.close() });
    // Both waited for at once, so that /readyz names each one missing.
    const [, opened] = await Promise.all([
      untilRedisAnswers({ connection, url: settings.redisUrl, readiness, signal }).then(() =>
        warnUnlessNoEviction(connection, logger),
      ),
      untilOpened({
        dependency: 'database',
        open: () =>
          openSyncRuntime(loaded, logger, {
            alerts: alertQueue ? { transport: alertQueue, redisPrefix: settings.prefix } : undefined,
            resolveOrganizations: false,
            tellStartFailure: false,
          }),
        close: (done) => done.close(),
        readiness,
        signal,
      }).then((done) => {
        runtime = done;
        closers.push({ name: 'runtime', close: () => done.close() });
        return done;
      }),
    ]);
    if (signal.aborted) throw new WorkerStartStoppedError();
    const parts = await startWorkerParts({
      ...props,
      runtime: opened,
      connection,
      alertQueue,
      alertTargets,
      readiness,
      front,
      closers,
    });
    return { settings, ...parts, close, interruptRuns };
  };
  const running = start();
  starting = running;
  const started = running.catch(async (error: unknown) => {
    await close();
    throw error;
  });
  // Handled here too: after a shutdown during the start, no one waits for it any more.
  started.catch(() => undefined);
  return {
    settings,
    dashboardUrl: front?.url ?? null,
    readiness,
    started,
    close,
    interruptRuns,
  };
}

/** The starting app's server: `/readyz` checks the state DB and the API as the start saw them, Redis as the connection does now. */
function startingServer(
  props: WorkerDaemonProps,
  readiness: WorkerReadiness,
  connection: Redis,
): FrontServerProps {
  const { config } = props.loaded;
  return {
    host: config.dashboard.host,
    port: config.dashboard.port,
    app: buildStartingApp({
      checks: [
        readiness.check('database'),
        {
          name: 'redis',
          check: async () => {
            if (connection.status !== 'ready') throw new Error(`Redis connection ${connection.status}`);
          },
        },
        readiness.check('api'),
      ],
      logger: props.logger,
    }),
    logger: props.logger,
  };
}

/** Several workers on one machine: the first serves the dashboard, the others only work. */
async function servedUnlessPortTaken<T>(start: () => Promise<T>, logger: Logger): Promise<T | null> {
  try {
    return await start();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    logger.warn('dashboard port in use (another worker on this machine?): this worker serves no dashboard');
    return null;
  }
}
