import type { Logger } from 'pino';
import { type Clock, systemClock } from '../domain/clock.js';
import { messageOf } from '../domain/errors.js';
import { settlesWithin } from '../domain/settle.js';
import { type AlertEvent, throttleOf } from './events.js';
import type { AlertSink, AlertThrottle, AlertTransport } from './ports.js';
import { type AlertTarget, wants, withoutUrl } from './targets.js';

export interface AlertsProps {
  targets: readonly AlertTarget[];
  /** Where the alerts go; unused without targets. */
  transport: AlertTransport;
  throttle: AlertThrottle;
  /** `alerts.repeatMinutes`: see `throttleOf`. */
  repeatMinutes: number;
  logger: Logger;
}

/**
 * Where the application tells what happened (`notify`): each event goes to the targets that want
 * it, through the transport, in the background; an event that repeats is held back within its
 * window. Nothing here throws at its caller or makes it wait: a sync never waits for an alert.
 * `close(limitMs)` waits for what is under way, at most `limitMs`.
 *
 * @example
 * const alerts = new Alerts({ targets, transport, throttle: new MemoryAlertThrottle(), repeatMinutes: 60, logger });
 * alerts.notify(runFailedEvent({ sourceId: 'erp-csv', error }, systemClock));
 * await alerts.close(3000);
 */
export class Alerts implements AlertSink {
  readonly #pending = new Set<Promise<void>>();
  #closed = false;

  constructor(private readonly props: AlertsProps) {}

  /** Whether any target is configured (without one, `notify` does nothing). */
  get enabled(): boolean {
    return this.props.targets.length > 0;
  }

  notify(event: AlertEvent): void {
    const targets = this.props.targets.filter((t) => wants(t, event.type));
    if (targets.length === 0) return;
    if (this.#closed) {
      this.props.logger.warn(
        { alert: event.type, sourceId: event.sourceId },
        'alert raised after shutdown: dropped',
      );
      return;
    }
    const task = this.#dispatch(event, targets).catch((error: unknown) =>
      this.props.logger.error({ alert: event.type, err: messageOf(error) }, 'alert not dispatched'),
    );
    this.#pending.add(task);
    void task.finally(() => this.#pending.delete(task));
  }

  /** Waits for the alerts under way, at most `limitMs`, then closes the transport. Never throws. */
  async close(limitMs: number): Promise<void> {
    this.#closed = true;
    const started = Date.now();
    await settlesWithin(Promise.allSettled([...this.#pending]), limitMs);
    await this.props.transport.close(Math.max(0, limitMs - (Date.now() - started))).catch(() => undefined);
  }

  async #dispatch(event: AlertEvent, targets: readonly AlertTarget[]): Promise<void> {
    const log = this.props.logger;
    const rule = throttleOf(event, this.props.repeatMinutes);
    if (rule && !(await this.#claim(rule.key, rule.windowMs))) {
      log.info(
        { alert: event.type, sourceId: event.sourceId, windowMs: rule.windowMs },
        'alert held back: the same one was sent within its window',
      );
      return;
    }
    log.info(
      {
        event: 'alert.raised',
        alert: event.type,
        alertId: event.id,
        sourceId: event.sourceId,
        targets: targets.map((t) => t.id),
      },
      event.summary,
    );
    await Promise.all(
      targets.map((target) =>
        this.props.transport.send(target, event).catch((error: unknown) =>
          log.warn(
            {
              alert: event.type,
              alertId: event.id,
              target: target.id,
              err: withoutUrl(messageOf(error), target.url),
            },
            'alert not handed to its target',
          ),
        ),
      ),
    );
  }

  /** A throttle that cannot answer (Redis down) lets the alert through: better twice than never. */
  async #claim(key: string, windowMs: number): Promise<boolean> {
    try {
      return await this.props.throttle.claim(key, windowMs);
    } catch (error) {
      this.props.logger.debug({ key, err: messageOf(error) }, 'alert throttle unavailable: sending');
      return true;
    }
  }
}

/** The throttle of one process (no Redis): each process holds back its own repeats. */
export class MemoryAlertThrottle implements AlertThrottle {
  readonly #until = new Map<string, number>();
  constructor(private readonly clock: Clock = systemClock) {}

  async claim(key: string, windowMs: number): Promise<boolean> {
    const now = this.clock.now().getTime();
    if ((this.#until.get(key) ?? 0) > now) return false;
    this.#until.set(key, now + windowMs);
    return true;
  }
}
