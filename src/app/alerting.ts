import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { Alerts, MemoryAlertThrottle } from '../alerts/alerts.js';
import { DirectAlertTransport } from '../alerts/direct-transport.js';
import { runFailedEvent } from '../alerts/events.js';
import { PassWatch } from '../alerts/pass-watch.js';
import type { AlertTransport } from '../alerts/ports.js';
import type { AlertTarget } from '../alerts/targets.js';
import { type AccessTokens, tellingRefusals, watchingTokenAnswers } from '../alerts/token-watch.js';
import { type AlertsConfig, type Config, configSchema } from '../config/schema.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { RedisAlertThrottle } from '../jobs/alert-throttle.js';
import type { StateDb } from '../state/database.js';
import { PausedSources } from '../state/paused-sources.js';
import type { SourceSummary } from '../sync/run-sync.js';
import type { SyncService, SyncUseCases } from '../sync/sync-service.js';

/** How long closing a runtime may wait for its alerts (`sync --once` exits after it). */
export const ALERTS_CLOSE_MS = 3000;
/** `sync --once` delivers in the process: a few attempts only, so its exit never waits long. */
const DIRECT_ATTEMPTS_MAX = 3;

/** The alerts of a runtime, and the watches that raise them. */
export interface Alerting {
  alerts: Alerts;
  watch: PassWatch;
  /** The API client's token provider, telling `token.refused`. */
  tokens(tokens: AccessTokens): AccessTokens;
  /** The token endpoint's fetch, telling `token.expiring` when the server says the refresh token's lifetime. */
  tokenFetch(fetchImpl: typeof fetch | undefined): typeof fetch;
  close(limitMs?: number): Promise<void>;
}

export interface AlertingProps {
  config: Pick<Config, 'queue'> & { alerts?: AlertsConfig | undefined };
  /** From `resolveAlertTargets` (checked before anything opened). */
  targets: readonly AlertTarget[];
  db: StateDb;
  /** The runtime's Redis, when configured: repeated alerts are then held back across processes. */
  redis: Redis | undefined;
  /** The worker's queue; default: delivered from this process (`sync --once`, `failures retry`). */
  transport?: AlertTransport | undefined;
  /** Of the throttle's Redis keys; default `queue.prefix`. */
  redisPrefix?: string | undefined;
  fetch?: typeof fetch;
  logger: Logger;
  clock?: Clock;
}

/** `alerts.*` as configured, or the defaults for a configuration built without the key. */
export const alertsConfigOf = (config: { alerts?: AlertsConfig | undefined }): AlertsConfig =>
  config.alerts ?? configSchema.shape.alerts.parse(undefined);

/** The sink of a runtime: its transport, and what holds back repeats (Redis when given, else this process). */
function alertsOf(props: Omit<AlertingProps, 'db'>, settings: AlertsConfig, logger: Logger): Alerts {
  const clock = props.clock ?? systemClock;
  const transport =
    props.transport ??
    new DirectAlertTransport({
      attempts: Math.min(settings.attempts, DIRECT_ATTEMPTS_MAX),
      timeoutMs: settings.timeoutSeconds * 1000,
      logger,
      ...(props.fetch ? { fetch: props.fetch } : {}),
    });
  const throttle = props.redis
    ? new RedisAlertThrottle({ redis: props.redis, prefix: props.redisPrefix ?? props.config.queue.prefix })
    : new MemoryAlertThrottle(clock);
  return new Alerts({
    targets: props.targets,
    transport,
    throttle,
    repeatMinutes: settings.repeatMinutes,
    logger,
  });
}

/**
 * The alerting of a sync runtime: where alerts go (the transport), what holds back repeats, the
 * pass watch (alerts and the automatic pause, over the state DB) and the token watches.
 */
export function openAlerting(props: AlertingProps): Alerting {
  const settings = alertsConfigOf(props.config);
  const clock = props.clock ?? systemClock;
  const logger = props.logger.child({ component: 'alerts' });
  const alerts = alertsOf(props, settings, logger);
  const watch = new PassWatch({
    store: new PausedSources(props.db),
    alerts,
    settings,
    logger,
    clock,
  });
  return {
    alerts,
    watch,
    tokens: (tokens) => tellingRefusals(tokens, alerts, clock),
    tokenFetch: (fetchImpl) =>
      watchingTokenAnswers(fetchImpl, { alerts, expiryDays: settings.tokenExpiryDays, clock }),
    close: (limitMs = ALERTS_CLOSE_MS) => alerts.close(limitMs),
  };
}

/**
 * The alerts of the worker's start (`WorkerReadiness`): delivered from this process and held back
 * in its memory, as Redis (the queue and the shared throttle) may be what it waits for. Closed
 * with `close(limitMs)`.
 */
export function startAlerts(props: Omit<AlertingProps, 'db' | 'transport' | 'redis'>): Alerts {
  const logger = props.logger.child({ component: 'alerts' });
  return alertsOf({ ...props, redis: undefined }, alertsConfigOf(props.config), logger);
}

/**
 * Tells `run.failed` (no source: nothing could start) for a runtime that could not open: the API,
 * the credentials, the state DB... Delivered from this process whatever the runtime's transport
 * (a worker that cannot start takes no job from the queue), waiting at most `ALERTS_CLOSE_MS`.
 */
export async function tellStartFailed(
  props: Omit<AlertingProps, 'db' | 'transport'> & { error: unknown },
): Promise<void> {
  if (props.targets.length === 0) return;
  const logger = props.logger.child({ component: 'alerts' });
  const alerts = alertsOf(props, alertsConfigOf(props.config), logger);
  alerts.notify(runFailedEvent({ sourceId: null, error: props.error }, props.clock ?? systemClock));
  await alerts.close(ALERTS_CLOSE_MS);
}

/**
 * The sync's use cases, each pass told to the pass watch when it ends: `run.failed` and the
 * automatic pause when it throws, `run.new-failures` when a run opened many, or could not read a
 * file. Dry runs are not watched (they write nothing, and a trial is not an outage).
 */
export function watchingPasses(service: SyncService | SyncUseCases, watch: PassWatch): SyncUseCases {
  const watched = async <T>(
    sourceId: string,
    run: () => Promise<T>,
    summaries: (result: T) => readonly SourceSummary[],
  ): Promise<T> => {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      await watch.passFailed(sourceId, error);
      throw error;
    }
    await watch.passEnded(
      sourceId,
      summaries(result).map((s) => ({
        runId: s.runId,
        failed: Object.values(s.counts).reduce((n, c) => n + c.failed, 0),
        rejectedFiles: s.abandoned.length,
      })),
    );
    return result;
  };
  // Every argument is passed on as given: a use case may grow options the watch need not know.
  return {
    syncSource: (...args) =>
      args[1]?.dryRun
        ? service.syncSource(...args)
        : watched(
            args[0],
            () => service.syncSource(...args),
            (r) => r,
          ),
    retryFailures: (...args) =>
      watched(
        args[0],
        () => service.retryFailures(...args),
        (r) => (r.summary ? [r.summary] : []),
      ),
    resyncRecord: (...args) =>
      watched(
        args[0],
        () => service.resyncRecord(...args),
        (r) => [r],
      ),
    recoverInterrupted: (...args) => service.recoverInterrupted(...args),
    hasRecord: (...args) => service.hasRecord(...args),
  };
}
