import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isRetryable, messageOf } from '../domain/errors.js';
import { deliverAlert } from './delivery.js';
import type { AlertEvent } from './events.js';
import type { AlertTransport } from './ports.js';
import type { AlertTarget } from './targets.js';

export interface DirectAlertTransportProps {
  /** Attempts per alert and target (`sync --once` bounds it to 3). */
  attempts: number;
  /** Before the second attempt; each next wait doubles. Default 500 ms. */
  backoffMs?: number;
  /** Per request. */
  timeoutMs: number;
  fetch?: typeof fetch;
  logger: Logger;
}

/**
 * Delivers alerts from this process, for `sync --once` (no worker to take a queue): in the
 * background while the pass goes on, retried a few times on a transient fault. `close()` (the
 * process is about to exit) gives up whatever is still under way: an alert never holds the exit
 * longer than the limit its caller gives, and never changes the exit code.
 */
export class DirectAlertTransport implements AlertTransport {
  readonly #abort = new AbortController();

  constructor(private readonly props: DirectAlertTransportProps) {}

  async send(target: AlertTarget, event: AlertEvent): Promise<void> {
    const { logger } = this.props;
    const signal = this.#abort.signal;
    const fields = { alert: event.type, alertId: event.id, target: target.id };
    let delay = this.props.backoffMs ?? 500;
    for (let attempt = 1; ; attempt++) {
      try {
        await deliverAlert(target, event, {
          timeoutMs: this.props.timeoutMs,
          signal,
          ...(this.props.fetch ? { fetch: this.props.fetch } : {}),
        });
        logger.info({ event: 'alert.delivered', ...fields, attempt }, 'alert delivered');
        return;
      } catch (error) {
        const last = attempt >= this.props.attempts || !isRetryable(error) || signal.aborted;
        if (last) {
          logger.warn(
            {
              event: 'alert.undelivered',
              ...fields,
              attempt,
              err: signal.aborted ? 'the process is exiting' : messageOf(error),
            },
            'alert not delivered',
          );
          return;
        }
        logger.debug(
          { ...fields, attempt, retryInMs: delay, err: messageOf(error) },
          'alert delivery failed: retrying',
        );
      }
      try {
        await sleep(delay, undefined, { signal });
      } catch {
        logger.warn(
          { event: 'alert.undelivered', ...fields, attempt, err: 'the process is exiting' },
          'alert not delivered',
        );
        return;
      }
      delay *= 2;
    }
  }

  /** Stops every delivery under way (`Alerts.close` waited for them first). */
  async close(): Promise<void> {
    this.#abort.abort();
  }
}
