import { Command, InvalidArgumentError } from 'commander';
import type { Redis } from 'ioredis';
import { loadConfig } from '../config/load.js';
import { resolveCredentials } from '../dashboard/credentials.js';
import { DashboardConfigError } from '../dashboard/errors.js';
import { SyncMetrics } from '../dashboard/metrics.js';
import { startDashboard } from '../dashboard/server.js';
import { lastSuccessfulRuns } from '../dashboard/status-queries.js';
import { systemClock } from '../domain/clock.js';
import { BullSyncQueues } from '../jobs/queues.js';
import { openQueueConnection, redactedUrl, waitForRedis } from '../jobs/redis-connection.js';
import { workerSettingsOf } from '../jobs/worker-settings.js';
import { CliError } from './errors.js';
import { openStateRuntime } from './runtime.js';

interface DashboardFlags {
  port?: number;
  host?: string;
}

const port = (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535)
    throw new InvalidArgumentError('must be an integer from 0 to 65535');
  return n;
};

/**
 * `dashboard`: serves the dashboard alone (the `worker` serves it too). With `REDIS_URL` its
 * actions queue jobs for the workers; without it the page is read-only. The first stdout line is
 * one JSON object `{"url":...}`; it serves until SIGINT/SIGTERM.
 */
export function dashboardCommand(): Command {
  return new Command('dashboard')
    .description(
      'serve the sync dashboard and bull-board alone (default 127.0.0.1:3000; DASHBOARD_USER and DASHBOARD_PASSWORD required beyond loopback)',
    )
    .option(
      '--port <n>',
      'port to listen on (0 = any free port; default $DASHBOARD_PORT or dashboard.port)',
      port,
    )
    .option('--host <address>', 'address to bind (default $DASHBOARD_HOST or dashboard.host)')
    .action(async (flags: DashboardFlags, command: Command) => {
      const loaded = loadConfig({ file: command.optsWithGlobals().config });
      const { config, secrets } = loaded;
      const host = flags.host ?? config.dashboard.host;
      let credentials: ReturnType<typeof resolveCredentials>;
      try {
        credentials = resolveCredentials({
          user: secrets.dashboardUser,
          password: secrets.dashboardPassword,
          host,
        });
      } catch (error) {
        if (error instanceof DashboardConfigError) throw new CliError(error.message);
        throw error;
      }
      const runtime = await openStateRuntime(loaded);
      const closers: Array<() => Promise<unknown>> = [runtime.close];
      const close = async () => {
        for (const fn of closers.reverse()) await fn().catch(() => {});
      };
      try {
        const { logger } = runtime;
        const settings = workerSettingsOf(config);
        let queues: BullSyncQueues | undefined;
        if (settings) {
          const connection: Redis = openQueueConnection({
            url: settings.redisUrl,
            logger,
            name: 'receivables-sync-dashboard',
          });
          closers.push(() => connection.quit());
          await waitForRedis(connection, settings.redisUrl, 5000).catch((error: Error) =>
            logger.warn(
              { err: error.message, redis: redactedUrl(settings.redisUrl) },
              'Redis not reachable yet: actions wait for it',
            ),
          );
          const bull = new BullSyncQueues({ connection, settings, logger });
          queues = bull;
          closers.push(() => bull.close());
        } else {
          logger.warn('no REDIS_URL: the dashboard is read-only (its actions queue jobs for the worker)');
        }
        const metrics = new SyncMetrics({
          ...(queues ? { queues: () => queues.queues } : {}),
          lastSuccess: lastSuccessfulRuns(runtime.database.db),
          processMetrics: true,
          logger,
        });
        const dashboard = await startDashboard(
          {
            sources: config.sources,
            db: runtime.database.db,
            queues,
            credentials,
            host,
            metrics,
            clock: systemClock,
            logger,
          },
          flags.port ?? config.dashboard.port,
        );
        closers.push(() => dashboard.close());
        process.stdout.write(`${JSON.stringify({ url: dashboard.url })}\n`);
        process.stderr.write(`Dashboard serving ${dashboard.url} (Ctrl-C stops it).\n`);
        await new Promise<void>((resolve) => {
          process.once('SIGINT', () => resolve());
          process.once('SIGTERM', () => resolve());
        });
      } finally {
        await close();
      }
    });
}
