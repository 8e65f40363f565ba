import type { Logger } from 'pino';
import type { SyncRuntime } from '../cli/runtime.js';
import type { LoadedConfig } from '../config/load.js';
import { PausedSources } from '../dashboard/paused-sources.js';
import { restoreClaimedFiles } from './claimed-files.js';
import { BullSyncQueues } from './queues.js';
import { openQueueConnection, waitForRedis, warnUnlessNoEviction } from './redis-connection.js';
import { SourceSchedules } from './schedules.js';
import { SourceLock } from './source-lock.js';
import { createSyncProcessor, type SyncUseCases } from './sync-processor.js';
import { closeSyncWorker, settlesWithin, startSyncWorker } from './sync-worker.js';
import type { WorkerSettings } from './worker-settings.js';

/** What the dashboard gets from the worker. */
export interface WorkerDashboardDeps {
  runtime: SyncRuntime;
  queues: BullSyncQueues;
  loaded: LoadedConfig;
  logger: Logger;
}

/** A started dashboard: where it listens, and how to stop it. */
export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

export interface WorkerDaemonProps {
  loaded: LoadedConfig;
  settings: WorkerSettings;
  logger: Logger;
  /** The composition root of a sync (`openSyncRuntime`): DB, API client, shared limiter, tokens. */
  openRuntime(loaded: LoadedConfig, logger: Logger): Promise<SyncRuntime>;
  /** The use cases over the runtime (`syncServiceOf`). */
  syncService(runtime: SyncRuntime): SyncUseCases;
  /** Starts the dashboard; absent (or resolving null): no dashboard in this process. */
  startDashboard?: (deps: WorkerDashboardDeps) => Promise<RunningDashboard | null>;
  /** How long Redis may take to answer at start. Default 10 s. */
  redisTimeoutMs?: number;
}

export interface RunningWorkerDaemon {
  queues: BullSyncQueues;
  dashboard: RunningDashboard | null;
  /** The sources with a schedule. */
  scheduled: string[];
  /**
   * Stops everything in reverse order of start. Idempotent. `jobsLeft`: jobs were still running at
   * the shutdown limit, and the parts after the worker (queues, runtime, connection) were left open
   * so the running pass does not fail half-way on a closed DB: the caller must end the process now;
   * the jobs resume in another worker once their lock expires, as after a crash.
   */
  close(): Promise<{ jobsLeft: boolean }>;
}

/** Each part of the daemon, closed in reverse order of start; resolving `false` stops the closing there. */
interface Closer {
  name: string;
  close(): Promise<unknown>;
}

/** How long a part other than the worker may take to close before it is left behind. */
const CLOSE_LIMIT_MS = 5000;

/**
 * Starts the worker daemon: the Redis connection of the queues (eviction policy checked), the
 * sync runtime, the queues, the BullMQ worker, the cron schedules, then the dashboard. `close()`
 * stops them in reverse order: dashboard, schedules, worker (running jobs get
 * `settings.shutdownMs`), queues, runtime (DB, API client, the runtime's Redis), connection.
 */
export async function startWorkerDaemon(props: WorkerDaemonProps): Promise<RunningWorkerDaemon> {
  const { loaded, settings, logger } = props;
  const closers: Closer[] = [];
  let closing: Promise<{ jobsLeft: boolean }> | undefined;
  const close = () => {
    closing ??= closeInReverse(closers, settings.shutdownMs, logger);
    return closing;
  };
  try {
    const connection = openQueueConnection({ url: settings.redisUrl, logger });
    closers.push({ name: 'redis', close: () => quitOrDisconnect(connection) });
    await waitForRedis(connection, settings.redisUrl, props.redisTimeoutMs ?? 10_000);
    await warnUnlessNoEviction(connection, logger);

    const runtime = await props.openRuntime(loaded, logger);
    closers.push({ name: 'runtime', close: () => runtime.close() });
    const paused = new PausedSources(runtime.database.db);
    const isPaused = (sourceId: string) => paused.isPaused(sourceId);

    const queues = new BullSyncQueues({ connection, settings, logger });
    closers.push({ name: 'queues', close: () => queues.close() });

    const processor = createSyncProcessor({
      service: props.syncService(runtime),
      sources: loaded.config.sources,
      lock: new SourceLock({ redis: connection, prefix: settings.prefix, ttlMs: settings.lockMs, logger }),
      logger,
      recordExists: async (sourceId, kind, key) =>
        (await runtime.repos.recordMap.storedRecords(sourceId, { kind, keys: [key] })).length > 0,
      isPaused,
      restoreClaimedFiles,
      sourceBusyRetryMs: settings.sourceBusyRetryMs,
    });
    const worker = await startSyncWorker({ connection, settings, processor, logger });
    closers.push({ name: 'worker', close: () => closeSyncWorker(worker, settings.shutdownMs, logger) });

    const schedules = new SourceSchedules({ sources: loaded.config.sources, queues, isPaused, logger });
    const scheduled = schedules.start();
    closers.push({ name: 'schedules', close: () => schedules.stop() });

    const dashboard = props.startDashboard
      ? await props.startDashboard({ runtime, queues, loaded, logger })
      : null;
    if (dashboard) closers.push({ name: 'dashboard', close: () => dashboard.close() });

    return { queues, dashboard, scheduled, close };
  } catch (error) {
    await close();
    throw error;
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

/** QUIT waits for Redis; during an outage it would wait forever, so the socket is dropped instead. */
async function quitOrDisconnect(redis: {
  quit(): Promise<unknown>;
  disconnect(): void;
  status: string;
}): Promise<void> {
  if (redis.status !== 'ready' || !(await settlesWithin(redis.quit(), 2000))) redis.disconnect();
}
