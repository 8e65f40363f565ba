import { systemClock } from '../domain/clock.js';
import type { RunningDashboard, WorkerDashboardDeps } from '../jobs/worker-daemon.js';
import { resolveCredentials } from './credentials.js';
import { SyncMetrics } from './metrics.js';
import { startDashboard } from './server.js';
import { lastSuccessfulRuns } from './status-queries.js';

/**
 * The dashboard as the `worker` serves it: on `dashboard.host:port` (DASHBOARD_HOST/PORT), with
 * DASHBOARD_USER/PASSWORD, over the worker's queues and state DB. Pass it as `startDashboard` of
 * `startWorkerDaemon`; give it the `metrics` the sync is instrumented with, or it makes its own
 * (which then reads the client's and limiter's counters, without the split by status).
 *
 * @throws DashboardConfigError without credentials beyond loopback, or with half a pair.
 */
export async function startWorkerDashboard(
  deps: WorkerDashboardDeps & { metrics?: SyncMetrics },
): Promise<RunningDashboard> {
  const { runtime, queues, loaded, logger } = deps;
  const { config, secrets } = loaded;
  const host = config.dashboard.host;
  const credentials = resolveCredentials({
    user: secrets.dashboardUser,
    password: secrets.dashboardPassword,
    host,
  });
  const metrics = deps.metrics ?? new SyncMetrics({ processMetrics: true, logger });
  metrics.watch({
    queues: () => queues.queues,
    lastSuccess: lastSuccessfulRuns(runtime.database.db),
    runtimeStats: () => ({ requests: runtime.client.stats.requests, limiter: runtime.limiter.stats() }),
  });
  return startDashboard(
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
    config.dashboard.port,
  );
}
