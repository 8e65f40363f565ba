import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { invalidSchedules, SourceCronTasks } from './schedules.js';
import type { SyncQueues } from './types.js';

export interface ReconcileSchedulesProps {
  sources: readonly SourceConfig[];
  queues: Pick<SyncQueues, 'enqueueSourceReconcile'>;
  /** A paused source's ticks enqueue nothing. */
  isPaused(sourceId: string): Promise<boolean>;
  logger: Logger;
  /** IANA time zone of the cron expressions; default: the process's. */
  timezone?: string;
}

/** What a tick did. */
export type ReconcileTickOutcome =
  | { sourceId: string; enqueued: true; jobId: string; deduplicated: boolean; repair: boolean }
  | { sourceId: string; enqueued: false; reason: 'paused' | 'error' | 'unscheduled' };

/**
 * The reconciliation schedules of the sources (`sources[].reconcile.schedule`, off when absent;
 * docs/reconcile.md). A tick only enqueues a `source-reconcile` job (report only, or a repair when
 * `reconcile.repair` is true); the job runs in whichever worker takes it, under the source lock, so
 * never during a pass of that source. As for passes, every worker runs the same schedules and a
 * tick's job id is deterministic: a tick is queued once.
 *
 * @example
 *   const schedules = new ReconcileSchedules({ sources, queues, isPaused, logger });
 *   schedules.start();                              // one cron task per source with reconcile.schedule
 *   await schedules.exec('erp-csv', new Date());    // what a tick does, callable from tests
 *   await schedules.stop();
 */
export class ReconcileSchedules {
  readonly #tasks: SourceCronTasks;

  constructor(private readonly props: ReconcileSchedulesProps) {
    this.#tasks = new SourceCronTasks({
      ...props,
      name: 'source-reconcile',
      expressionOf: (s) => s.reconcile?.schedule,
    });
  }

  /** The invalid reconciliation schedules, one message each (checked before anything starts). */
  static problems(sources: readonly SourceConfig[]): string[] {
    return invalidSchedules(sources, (s) => s.reconcile?.schedule, 'reconcile.schedule');
  }

  /** One tick of a source's reconciliation schedule: enqueue its job, deduplicated. Never throws. */
  async exec(sourceId: string, tick: Date): Promise<ReconcileTickOutcome> {
    const log = this.props.logger.child({ sourceId });
    const config = this.props.sources.find((s) => s.id === sourceId);
    if (!config?.reconcile?.schedule) return { sourceId, enqueued: false, reason: 'unscheduled' };
    const repair = config.reconcile.repair ?? false;
    try {
      if (await this.props.isPaused(sourceId)) {
        log.info(
          { event: 'reconcile.schedule.skipped', reason: 'paused' },
          'source paused: reconciliation tick skipped',
        );
        return { sourceId, enqueued: false, reason: 'paused' };
      }
      const { jobId, deduplicated } = await this.props.queues.enqueueSourceReconcile(sourceId, {
        trigger: 'schedule',
        repair,
        scheduledAt: tick,
      });
      log.info(
        { event: 'reconcile.schedule.fired', jobId, deduplicated, repair, tick: tick.toISOString() },
        'reconciliation schedule fired',
      );
      return { sourceId, enqueued: true, jobId, deduplicated, repair };
    } catch (error) {
      log.error({ err: (error as Error).message }, 'reconciliation tick could not enqueue the job');
      return { sourceId, enqueued: false, reason: 'error' };
    }
  }

  /** Starts one cron task per source with `reconcile.schedule`; returns the ids scheduled. */
  start(): string[] {
    return this.#tasks.start(this.props.sources, (sourceId, date) => this.exec(sourceId, date));
  }

  /** Stops every task: no tick fires after this resolves. */
  stop(): Promise<void> {
    return this.#tasks.stop();
  }
}
