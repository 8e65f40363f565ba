import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { AlertTarget } from '../alerts/targets.js';
import { connectionIdOf } from '../config/connections.js';
import type { FrontServer } from '../dashboard/front-server.js';
import { lastReconciliations } from '../dashboard/reconciliation-routes.js';
import { BullAlertQueue } from '../jobs/alert-queue.js';
import { closeAlertWorker, startAlertWorker } from '../jobs/alert-worker.js';
import { BullSyncQueues } from '../jobs/queues.js';
import { ReconcileSchedules } from '../jobs/reconcile-schedules.js';
import { SourceSchedules } from '../jobs/schedules.js';
import { SourceLock } from '../jobs/source-lock.js';
import { createSyncProcessor } from '../jobs/sync-processor.js';
import { closeSyncWorker, startSyncWorker } from '../jobs/sync-worker.js';
import { SyncMetrics } from '../metrics/sync-metrics.js';
import { PausedSources } from '../state/paused-sources.js';
import { SourcePasses } from '../state/source-passes.js';
import { StateCalls } from '../state/state-calls.js';
import { alertsConfigOf } from './alerting.js';
import { watchConnections } from './connection-budgets.js';
import { startDashboardServer } from './dashboard.js';
import { dropUploadsOf } from './drop-uploads.js';
import { reconcileWith } from './reconcile.js';
import { type SyncRuntime, syncServiceOf } from './runtime.js';
import type { RunningWorkerDaemon, WorkerDaemonProps } from './worker.js';
import { CLOSE_LIMIT_MS, type Closer } from './worker-closers.js';
import type { WorkerReadiness } from './worker-readiness.js';

/**
 * The worker's parts after its start (loaded by `launchWorkerDaemon` once it serves `/healthz`:
 * BullMQ, the dashboard and the sync are most of its loading time).
 */

/** The alerts' queue (attempts, backoff), delivered by every worker process; none without targets. */
export function openAlertQueue(
  props: Pick<WorkerDaemonProps, 'loaded' | 'settings' | 'logger'> & {
    connection: Redis;
    targets: readonly AlertTarget[];
  },
): BullAlertQueue | undefined {
  if (props.targets.length === 0) return undefined;
  const settings = alertsConfigOf(props.loaded.config);
  return new BullAlertQueue({
    connection: props.connection,
    prefix: props.settings.prefix,
    attempts: settings.attempts,
    backoffMs: settings.backoffSeconds * 1000,
    logger: props.logger,
  });
}

export interface WorkerPartsProps extends WorkerDaemonProps {
  runtime: SyncRuntime;
  connection: Redis;
  alertQueue: BullAlertQueue | undefined;
  alertTargets: readonly AlertTarget[];
  readiness: WorkerReadiness;
  front: FrontServer | null;
  /** Where each part started is pushed. */
  closers: Closer[];
}

/**
 * The parts that need Redis and the state DB, started once both answered: the check of the
 * connections, the queues, the processor, the alerts' and the sync's BullMQ workers, the cron
 * schedules, then the dashboard in place of the starting app. Each is pushed to `closers` as it starts.
 */
export async function startWorkerParts(
  props: WorkerPartsProps,
): Promise<Pick<RunningWorkerDaemon, 'queues' | 'dashboard' | 'scheduled' | 'reconcileScheduled'>> {
  const { loaded, settings, logger, runtime: opened, connection, alertQueue, closers } = props;
  // Each source's connection checked (with backoff while its API is down); each token's budget told to the dashboard.
  const watch = watchConnections({
    targets: opened.targets,
    sources: loaded.config.sources,
    redis: connection,
    prefix: settings.prefix,
    logger,
    readiness: props.readiness,
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

  const metrics = props.metrics ?? new SyncMetrics({ processMetrics: true, logger });
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
    passes: new SourcePasses(opened.database.db, new StateCalls()),
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
      targets: props.alertTargets,
      timeoutMs: alertsConfigOf(loaded.config).timeoutSeconds * 1000,
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

  // The dashboard replaces the starting app on the server that has listened since the start.
  const { front } = props;
  const dashboard = front
    ? await startDashboardServer({
        loaded,
        db: opened.database.db,
        queues,
        metrics,
        logger,
        budgetsFrom: settings,
        front,
        readiness: [props.readiness.check('api')],
        uploads: dropUploadsOf(opened, loaded.config.dashboard.uploadMaxMb * 1024 * 1024),
      })
    : null;
  if (dashboard) closers.push({ name: 'dashboard', close: () => dashboard.close() });
  return { queues, dashboard, scheduled, reconcileScheduled };
}
