import type { Logger } from 'pino';
import type { AlertsConfig } from '../config/schema.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { messageOf } from '../domain/errors.js';
import { settlesWithin } from '../domain/settle.js';
import { autoPauseReason, newFailuresEvent, runFailedEvent, sourcePausedEvent } from './events.js';
import type { AlertSink, SourceHealthStore } from './ports.js';

export interface PassWatchProps {
  store: SourceHealthStore;
  alerts: AlertSink;
  settings: Pick<AlertsConfig, 'newFailuresThreshold' | 'pauseAfterFailedRuns'>;
  logger: Logger;
  clock?: Clock;
  /** How long a pass's end may wait for this bookkeeping (the state DB) before it goes on without. Default 5 s. */
  limitMs?: number;
}

/** A run of a pass that ended: its id, how many of its records failed, how many files it could not read. */
export interface EndedRun {
  runId: string | null;
  failed: number;
  /** Files (units) it could not read at all: each is news, whatever the threshold. */
  rejectedFiles?: number;
}

/**
 * What happens when a pass ends, for the alerts and the automatic pause. Called by the sync's
 * composition root around every use case (a pass, a failure retry, a record re-sync), in the CLI
 * and in the worker alike:
 *
 * - a pass that threw is `run.failed`; after `pauseAfterFailedRuns` consecutive failed runs of the
 *   source (since it was last resumed), the source is paused (`auto`, with the last error) and
 *   `source.paused` is told, once;
 * - a run that opened at least `newFailuresThreshold` new failures, or could not read a file at
 *   all (a new file-level failure), is `run.new-failures`.
 *
 * Its reads and writes are few and small, and awaited (the next job of the source must find the
 * pause), within `limitMs`; the alerts themselves are only handed to the sink. Never throws.
 */
export class PassWatch {
  readonly #clock: Clock;

  constructor(private readonly props: PassWatchProps) {
    this.#clock = props.clock ?? systemClock;
  }

  /**
   * The pass ended normally: its runs' new failures. A file a run could not read at all is news
   * whatever the threshold (none of its rows was synced): `run.new-failures` names it, unless its
   * failure was open already (the same file rejected again).
   */
  async passEnded(sourceId: string, runs: readonly EndedRun[]): Promise<void> {
    const threshold = this.props.settings.newFailuresThreshold;
    // A run's new failures are among its failed records and files: most runs need no query at all.
    const candidates = runs.filter(
      (r): r is EndedRun & { runId: string } =>
        r.runId !== null && (r.failed + (r.rejectedFiles ?? 0) >= threshold || (r.rejectedFiles ?? 0) > 0),
    );
    if (candidates.length === 0) return;
    await this.#bounded(sourceId, 'count its new failures', async () => {
      for (const run of candidates) {
        const newFailures = await this.props.store.newFailuresOf(sourceId, run.runId);
        const rejectedFiles =
          (run.rejectedFiles ?? 0) > 0 ? await this.props.store.newRejectedFilesOf(sourceId, run.runId) : [];
        if (newFailures >= threshold || rejectedFiles.length > 0)
          this.props.alerts.notify(
            newFailuresEvent(
              { sourceId, runId: run.runId, newFailures, threshold, rejectedFiles },
              this.#clock,
            ),
          );
      }
    });
  }

  /** The pass threw: it could not run. */
  async passFailed(sourceId: string, error: unknown): Promise<void> {
    this.props.alerts.notify(runFailedEvent({ sourceId, error }, this.#clock));
    const limit = this.props.settings.pauseAfterFailedRuns;
    if (limit <= 0) return;
    await this.#bounded(sourceId, 'pause it automatically', async () => {
      const streak = await this.props.store.failedRunStreak(sourceId, limit);
      if (streak.count < limit) return;
      const lastError = streak.lastError ?? messageOf(error);
      const reason = autoPauseReason(streak.count, lastError);
      if (!(await this.props.store.pauseAutomatically(sourceId, reason))) return;
      this.props.logger.warn({ event: 'source.auto-paused', sourceId, failedRuns: streak.count }, reason);
      this.props.alerts.notify(
        sourcePausedEvent({ sourceId, failedRuns: streak.count, lastError }, this.#clock),
      );
    });
  }

  async #bounded(sourceId: string, what: string, work: () => Promise<void>): Promise<void> {
    const limitMs = this.props.limitMs ?? 5000;
    const done = work().catch((error: unknown) =>
      this.props.logger.warn({ sourceId, err: messageOf(error) }, `after the pass: cannot ${what}`),
    );
    if (!(await settlesWithin(done, limitMs)))
      this.props.logger.warn(
        { sourceId, limitMs },
        `after the pass: no time to ${what} (the state DB is slow)`,
      );
  }
}
