import { hostname } from 'node:os';
import { UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { deliverAlert } from '../alerts/delivery.js';
import type { AlertTarget } from '../alerts/targets.js';
import { isRetryable, messageOf } from '../domain/errors.js';
import { settlesWithin } from '../domain/settle.js';
import { ALERT_QUEUE, type AlertJob } from './alert-queue.js';

export type AlertWorker = Worker<AlertJob, void, string>;

export interface AlertWorkerProps {
  /** Shared connection (see `openQueueConnection`); the worker opens its own blocking one from it. */
  connection: Redis;
  prefix: string;
  /** The configured targets, their URLs read from this process's environment. */
  targets: readonly AlertTarget[];
  /** Per request (`alerts.timeoutSeconds`). */
  timeoutMs: number;
  /** Deliveries at once. Default 4. */
  concurrency?: number;
  fetch?: typeof fetch;
  logger: Logger;
}

/**
 * The consumer side of the alerts, in every worker process: delivers each job to its target. A
 * transient fault (network, timeout, 408, 429, 5xx) fails the attempt, retried by BullMQ with
 * backoff; any other answer, or a target the configuration no longer has, fails the job for good.
 * Logs name the target by id only.
 */
export async function startAlertWorker(props: AlertWorkerProps): Promise<AlertWorker> {
  const { logger } = props;
  const worker: AlertWorker = new Worker<AlertJob, void, string>(
    ALERT_QUEUE,
    async (job) => {
      const { targetId, event } = job.data;
      const target = props.targets.find((t) => t.id === targetId);
      if (!target) throw new UnrecoverableError(`no alert target "${targetId}" in the configuration`);
      try {
        await deliverAlert(target, event, {
          timeoutMs: props.timeoutMs,
          ...(props.fetch ? { fetch: props.fetch } : {}),
        });
      } catch (error) {
        if (!isRetryable(error)) throw new UnrecoverableError(messageOf(error));
        throw error;
      }
      logger.info(
        {
          event: 'alert.delivered',
          alert: event.type,
          alertId: event.id,
          target: targetId,
          attempt: job.attemptsMade + 1,
        },
        'alert delivered',
      );
    },
    {
      connection: props.connection,
      prefix: props.prefix,
      name: `${hostname()}:${process.pid}:alerts`,
      concurrency: props.concurrency ?? 4,
      removeOnComplete: { count: 1000 },
      removeOnFail: { count: 5000 },
    },
  );
  worker.on('failed', (job, error) => {
    if (!job) return;
    const permanent = error instanceof UnrecoverableError || error.name === 'UnrecoverableError';
    const willRetry = !permanent && job.attemptsMade < (job.opts.attempts ?? 1);
    const fields = {
      alert: job.data.event.type,
      alertId: job.data.event.id,
      target: job.data.targetId,
      attemptsMade: job.attemptsMade,
      willRetry,
      err: error.message,
    };
    if (willRetry) logger.warn(fields, 'alert delivery failed, will be retried');
    else logger.error({ ...fields, event: 'alert.undelivered' }, 'alert not delivered');
  });
  worker.on('error', (error) => logger.debug({ err: error.message }, 'alert worker error'));
  await worker.waitUntilReady();
  return worker;
}

/** Lets the deliveries under way finish, at most `limitMs`. */
export async function closeAlertWorker(worker: AlertWorker, limitMs: number): Promise<void> {
  await settlesWithin(worker.close(), limitMs);
}
