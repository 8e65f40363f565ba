import { Command } from 'commander';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import { type DashboardCredentials, resolveCredentials } from '../dashboard/credentials.js';
import { DashboardConfigError } from '../dashboard/errors.js';
import { SyncMetrics } from '../dashboard/metrics.js';
import { startDashboard } from '../dashboard/server.js';
import { lastSuccessfulRuns } from '../dashboard/status-queries.js';
import { systemClock } from '../domain/clock.js';
import { RedisUnavailableError } from '../jobs/redis-connection.js';
import { SourceSchedules } from '../jobs/schedules.js';
import {
  type RunningDashboard,
  type RunningWorkerDaemon,
  startWorkerDaemon,
  type WorkerDashboardDeps,
} from '../jobs/worker-daemon.js';
import { workerSettingsOf } from '../jobs/worker-settings.js';
import { createLogger } from '../logging/logger.js';
import { CliError, EXIT_CANNOT_RUN, EXIT_OK } from './errors.js';
import { openSyncRuntime, syncServiceOf } from './runtime.js';

/** After a shutdown, what still runs (a job abandoned at the limit) may not hold the process longer. */
const LINGER_MS = 3000;

/**
 * `worker`: the long-running daemon. Cron schedules enqueue passes, BullMQ workers run them (any
 * number of processes share the queue, the rate budget and the token refresh through Redis), and
 * the dashboard serves status and actions. SIGTERM or SIGINT stop it cleanly (exit 0); a second
 * signal ends it at once (exit 1).
 */
export function workerCommand(): Command {
  return new Command('worker')
    .description(
      'run the daemon: source schedules, queue workers, drop-folder polling and the dashboard (needs Redis)',
    )
    .addHelpText(
      'after',
      '\nStops on SIGTERM/SIGINT: schedules stop, running jobs get queue.shutdownSeconds to finish, then exit 0.',
    )
    .action(async (_flags: unknown, command: Command) => {
      const loaded = loadConfig({ file: command.optsWithGlobals().config });
      const settings = workerSettingsOf(loaded.config);
      if (!settings) throw new CliError('`worker` needs Redis: set REDIS_URL (or queue.redisUrl)');
      const problems = SourceSchedules.problems(loaded.config.sources);
      if (problems.length > 0)
        throw new CliError(`invalid schedules:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
      const credentials = dashboardCredentials(loaded);
      const logger = createLogger({ level: loaded.config.log.level });
      const metrics = new SyncMetrics({ processMetrics: true, logger });

      let daemon: RunningWorkerDaemon;
      try {
        daemon = await startWorkerDaemon({
          loaded,
          settings,
          logger,
          openRuntime: openSyncRuntime,
          syncService: (runtime) => metrics.instrumentService(syncServiceOf(runtime, loaded.config.sources)),
          startDashboard: (deps) => startWorkerDashboard(deps, { credentials, metrics }),
        });
      } catch (error) {
        if (error instanceof RedisUnavailableError) throw new CliError(error.message);
        throw error;
      }
      logger.info(
        {
          pid: process.pid,
          prefix: settings.prefix,
          concurrency: settings.concurrency,
          scheduled: daemon.scheduled,
          dashboard: daemon.dashboard?.url ?? null,
        },
        'worker started',
      );

      const signal = await nextSignal();
      logger.info({ signal }, 'shutting down');
      const again = (second: NodeJS.Signals) => {
        logger.warn({ signal: second }, 'second signal: exiting now');
        logger.flush();
        process.exit(EXIT_CANNOT_RUN);
      };
      process.once('SIGTERM', again).once('SIGINT', again);
      const { jobsLeft } = await daemon.close();
      logger.info({ jobsLeft }, 'worker stopped');
      logger.flush();
      // Jobs left at the shutdown limit must not run on: end now, as a crash would (they resume elsewhere).
      if (jobsLeft) process.exit(EXIT_OK);
      process.exitCode = EXIT_OK;
      setTimeout(() => process.exit(), LINGER_MS).unref();
    });
}

/** The dashboard's credentials, checked before anything starts (required beyond loopback). */
function dashboardCredentials({ config, secrets }: LoadedConfig): DashboardCredentials | undefined {
  try {
    return resolveCredentials({
      user: secrets.dashboardUser,
      password: secrets.dashboardPassword,
      host: config.dashboard.host,
    });
  } catch (error) {
    if (error instanceof DashboardConfigError) throw new CliError(error.message);
    throw error;
  }
}

/** The dashboard of the worker: its queues for the actions and bull-board, its metrics on `/metrics`. */
async function startWorkerDashboard(
  { runtime, queues, loaded, logger }: WorkerDashboardDeps,
  { credentials, metrics }: { credentials: DashboardCredentials | undefined; metrics: SyncMetrics },
): Promise<RunningDashboard | null> {
  const { config } = loaded;
  metrics.watch({
    queues: () => queues.queues,
    lastSuccess: lastSuccessfulRuns(runtime.database.db),
    runtimeStats: () => ({ requests: runtime.client.stats.requests, limiter: runtime.limiter.stats() }),
  });
  let dashboard: Awaited<ReturnType<typeof startDashboard>>;
  try {
    dashboard = await startDashboard(
      {
        sources: config.sources,
        db: runtime.database.db,
        queues,
        credentials,
        host: config.dashboard.host,
        metrics,
        clock: systemClock,
        logger,
      },
      config.dashboard.port,
    );
  } catch (error) {
    // Several workers on one machine: the first serves the dashboard, the others only work.
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    logger.warn(
      { port: config.dashboard.port, host: config.dashboard.host },
      'dashboard port in use (another worker on this machine?): this worker serves no dashboard',
    );
    return null;
  }
  return { url: dashboard.url, close: () => dashboard.close() };
}

/** The first SIGTERM or SIGINT. */
function nextSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', on).off('SIGINT', on);
      resolve(signal);
    };
    process.on('SIGTERM', on).on('SIGINT', on);
  });
}
