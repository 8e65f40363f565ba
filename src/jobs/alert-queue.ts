import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { AlertEvent } from '../alerts/events.js';
import type { AlertTransport } from '../alerts/ports.js';
import type { AlertTarget } from '../alerts/targets.js';
import { settlesWithin } from '../domain/settle.js';

/** The queue of the alerts: one job per alert and target, delivered by `startAlertWorker`. */
export const ALERT_QUEUE = 'alerts';

/**
 * One alert for one target. The target is named by its id, never by its URL: the URL (a secret)
 * stays in the environment of the processes, out of Redis and of bull-board.
 */
export interface AlertJob {
  targetId: string;
  event: AlertEvent;
}

export type AlertQueue = Queue<AlertJob, void, string>;

export interface BullAlertQueueProps {
  /** A connection made with `openQueueConnection` (shared: closing the queue leaves it open). */
  connection: Redis;
  prefix: string;
  /** `alerts.attempts`: deliveries of one job; retries back off exponentially from `backoffMs`. */
  attempts: number;
  backoffMs: number;
  logger: Logger;
}

/**
 * The producer side of the alerts, the transport of the worker: a job per target (so a target that
 * fails is retried alone), retried with exponential backoff by whichever worker process takes it.
 * Adding a job is all the sync ever waits for, and only in the background (`Alerts.notify`).
 *
 * @example
 * const queue = new BullAlertQueue({ connection, prefix: 'receivables-sync', attempts: 8, backoffMs: 5000, logger });
 * await queue.send(target, event); // job `<event id>.<target id>` in `<prefix>:alerts`
 */
export class BullAlertQueue implements AlertTransport {
  readonly queue: AlertQueue;
  readonly #logger: Logger;
  #closing: Promise<void> | undefined;

  constructor(props: BullAlertQueueProps) {
    this.#logger = props.logger;
    this.queue = new Queue<AlertJob, void, string>(ALERT_QUEUE, {
      connection: props.connection,
      prefix: props.prefix,
      defaultJobOptions: {
        attempts: props.attempts,
        backoff: { type: 'exponential', delay: props.backoffMs },
        removeOnComplete: { count: 1000 },
        removeOnFail: { count: 5000 },
      },
    });
    this.queue.on('error', (error) => this.#logger.debug({ err: error.message }, 'alert queue error'));
  }

  async send(target: AlertTarget, event: AlertEvent): Promise<void> {
    // The job id makes a second enqueue of the same alert for the same target a no-op.
    const job = await this.queue.add(
      event.type,
      { targetId: target.id, event },
      { jobId: `${event.id}.${target.id}` },
    );
    this.#logger.debug({ jobId: job.id, alert: event.type, target: target.id }, 'alert queued');
  }

  /** Idempotent; waits at most `limitMs` (default 5 s) for the queue to close. */
  async close(limitMs = 5000): Promise<void> {
    this.#closing ??= settlesWithin(this.queue.close(), limitMs).then(() => undefined);
    await this.#closing;
  }
}
