import type { Logger } from 'pino';
import { runFailedEvent } from '../alerts/events.js';
import type { AlertSink } from '../alerts/ports.js';
import type { ReadinessCheck } from '../dashboard/deps.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { AppError, messageOf } from '../domain/errors.js';

/** What the worker needs to run its passes: `/readyz` names each. */
export const WORKER_DEPENDENCIES = ['redis', 'database', 'api'] as const;
export type WorkerDependency = (typeof WORKER_DEPENDENCIES)[number];

type DependencyState =
  /** Not tried yet: it waits for another one (the API waits for the state DB). */
  | { status: 'pending' }
  /** Its first attempt is under way. */
  | { status: 'trying'; since: number }
  | { status: 'missing'; since: number; error: string }
  | { status: 'ok' };

/** A first attempt without an answer for this long counts as missing (the API client retries for ~20 s). */
export const TRYING_GRACE_MS = 3000;

/** Runs `fn` after `ms`; returns what cancels it. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const timerSchedule: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  timer.unref();
  return () => clearTimeout(timer);
};

export interface WorkerReadinessProps {
  logger: Logger;
  /** Where the lasting outage is told (`run.failed`, no source); delivered from this process, as Redis may be what is missing. */
  alerts?: AlertSink | undefined;
  /** `alerts.notReadyMinutes` in ms: told once the worker has not been ready this long since its start (0: never). */
  notReadyMs: number;
  /** `alerts.repeatMinutes` in ms: told again this often while it lasts (0: once). */
  repeatMs: number;
  clock?: Clock;
  schedule?: Schedule;
}

/**
 * What the worker still waits for, from its start until every dependency has answered once: Redis,
 * the state DB (opened and migrated), the API (each connection's organizations listed). The start
 * (`worker-startup.ts`) and the connections' watch tell it each attempt; it logs each outage once
 * (`worker.waiting`) and the moment everything answered (`worker.ready`, with the time it took),
 * answers `/readyz` (`check`), and, when the wait lasts `notReadyMs`, raises `run.failed` with no
 * source, naming what is missing and why.
 *
 * @example
 * const readiness = new WorkerReadiness({ logger, alerts, notReadyMs: 300_000, repeatMs: 3_600_000 });
 * readiness.missing('redis', error, 2000); // worker.waiting, /readyz: redis failed
 * readiness.answered('redis');
 */
export class WorkerReadiness {
  readonly #props: WorkerReadinessProps;
  readonly #clock: Clock;
  readonly #startedAt: number;
  readonly #states = new Map<WorkerDependency, DependencyState>(
    WORKER_DEPENDENCIES.map((d) => [d, { status: 'pending' }]),
  );
  #cancelAlert: (() => void) | undefined;
  #ready = false;

  constructor(props: WorkerReadinessProps) {
    this.#props = props;
    this.#clock = props.clock ?? systemClock;
    this.#startedAt = this.#now();
    if (props.alerts && props.notReadyMs > 0) this.#alertIn(props.notReadyMs);
  }

  /** Whether every dependency has answered. */
  get ready(): boolean {
    return this.#ready;
  }

  /** An attempt to reach `dependency` begins (a dependency already missing stays so until it answers). */
  trying(dependency: WorkerDependency): void {
    if (this.#states.get(dependency)?.status === 'pending')
      this.#states.set(dependency, { status: 'trying', since: this.#now() });
  }

  /** An attempt failed; the next one comes in `retryInMs`. Logged once per outage, then at debug level. */
  missing(dependency: WorkerDependency, error: unknown, retryInMs?: number): void {
    const state = this.#states.get(dependency);
    const message = messageOf(error);
    const since = state?.status === 'missing' || state?.status === 'trying' ? state.since : this.#now();
    this.#states.set(dependency, { status: 'missing', since, error: message });
    const fields = { event: 'worker.waiting', dependency, err: message, retryInMs };
    if (state?.status === 'missing') this.#props.logger.debug(fields, `still waiting for ${dependency}`);
    else this.#props.logger.warn(fields, `waiting for ${dependency}: retrying with backoff`);
  }

  /** `dependency` answered. Once all have, the worker is ready (logged once, with the time since its start). */
  answered(dependency: WorkerDependency): void {
    const state = this.#states.get(dependency);
    this.#states.set(dependency, { status: 'ok' });
    if (state?.status === 'missing')
      this.#props.logger.info(
        { event: 'worker.dependency-back', dependency, waitedMs: this.#now() - state.since },
        `${dependency} answered`,
      );
    if (this.#ready || [...this.#states.values()].some((s) => s.status !== 'ok')) return;
    this.#ready = true;
    this.#cancelAlert?.();
    this.#props.logger.info(
      { event: 'worker.ready', readyMs: this.#now() - this.#startedAt },
      'worker ready: Redis, the state DB and the API answered',
    );
  }

  /** The `/readyz` check of `dependency`: passes once it answered, `pending` before its first attempt. */
  check(dependency: WorkerDependency): ReadinessCheck {
    return {
      name: dependency,
      check: async () => {
        const state = this.#states.get(dependency) ?? { status: 'pending' };
        if (state.status === 'ok') return;
        if (state.status === 'pending') return 'pending';
        if (state.status === 'trying') {
          if (this.#now() - state.since < TRYING_GRACE_MS) return 'pending';
          throw new Error(`${dependency}: no answer yet (still trying)`);
        }
        throw new Error(`${dependency}: ${state.error}`);
      },
    };
  }

  /** What is missing now, with why: `redis (connect ECONNREFUSED)`. */
  describeMissing(): string[] {
    return [...this.#states.entries()]
      .filter(([, s]) => s.status !== 'ok')
      .map(([name, s]) =>
        s.status === 'missing'
          ? `${name} (${s.error})`
          : `${name} (${s.status === 'trying' ? 'no answer yet' : 'not tried yet'})`,
      );
  }

  close(): void {
    this.#cancelAlert?.();
    this.#cancelAlert = undefined;
  }

  #alertIn(ms: number): void {
    const schedule = this.#props.schedule ?? timerSchedule;
    this.#cancelAlert = schedule(() => this.#tell(), ms);
  }

  #tell(): void {
    this.#cancelAlert = undefined;
    if (this.#ready) return;
    const waitedMs = this.#now() - this.#startedAt;
    const waited =
      waitedMs < 60_000 ? `${Math.round(waitedMs / 1000)} s` : `${Math.round(waitedMs / 60_000)} min`;
    const error = new AppError(
      'WORKER_NOT_READY',
      `the worker has waited ${waited} for ${this.describeMissing().join(', ')}; it retries by itself`,
    );
    this.#props.logger.warn({ event: 'worker.not-ready', err: error.message }, 'worker still not ready');
    this.#props.alerts?.notify(runFailedEvent({ sourceId: null, error }, this.#clock));
    if (this.#props.repeatMs > 0) this.#alertIn(this.#props.repeatMs);
  }

  #now(): number {
    return this.#clock.now().getTime();
  }
}
