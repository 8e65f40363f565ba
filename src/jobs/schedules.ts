import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import type { SyncQueues } from './types.js';

export interface SourceSchedulesProps {
  sources: readonly SourceConfig[];
  queues: Pick<SyncQueues, 'enqueueSourceSync'>;
  /** A paused source's ticks enqueue nothing. */
  isPaused(sourceId: string): Promise<boolean>;
  logger: Logger;
  /** IANA time zone of the cron expressions; default: the process's. */
  timezone?: string;
}

/** What a tick did. */
export type TickOutcome =
  | { sourceId: string; enqueued: true; jobId: string; deduplicated: boolean }
  | { sourceId: string; enqueued: false; reason: 'paused' | 'error' };

/**
 * The cron schedules of the sources (`sources[].schedule`, with an optional seconds field). A tick
 * only enqueues a pass of its source (`exec`); the pass runs in whichever worker takes the job.
 * For a CSV source this is the drop folder's polling: the pass takes the files that are complete.
 * Every worker process runs the same schedules: a tick's job id is deterministic, so a tick is
 * queued once, and deduplication keeps one pass per source pending.
 *
 * @example
 *   const schedules = new SourceSchedules({ sources, queues, isPaused, logger });
 *   schedules.start();           // one cron task per source with a schedule
 *   await schedules.exec('erp-csv', new Date()); // what a tick does, callable from tests
 *   await schedules.stop();
 */
export class SourceSchedules {
  readonly #tasks: SourceCronTasks;

  constructor(private readonly props: SourceSchedulesProps) {
    this.#tasks = new SourceCronTasks({ ...props, name: 'source-sync', expressionOf: (s) => s.schedule });
  }

  /** The invalid schedules, one message each (checked before anything starts). */
  static problems(sources: readonly SourceConfig[]): string[] {
    return invalidSchedules(sources, (s) => s.schedule, 'schedule');
  }

  /** One tick of a source's schedule: enqueue its pass, deduplicated. Never throws. */
  async exec(sourceId: string, tick: Date): Promise<TickOutcome> {
    const log = this.props.logger.child({ sourceId });
    try {
      if (await this.props.isPaused(sourceId)) {
        log.debug('source paused: tick skipped');
        return { sourceId, enqueued: false, reason: 'paused' };
      }
      const { jobId, deduplicated } = await this.props.queues.enqueueSourceSync(sourceId, {
        trigger: 'schedule',
        scheduledAt: tick,
      });
      log.info({ event: 'schedule.fired', jobId, deduplicated, tick: tick.toISOString() }, 'schedule fired');
      return { sourceId, enqueued: true, jobId, deduplicated };
    } catch (error) {
      log.error({ err: (error as Error).message }, 'schedule tick could not enqueue the pass');
      return { sourceId, enqueued: false, reason: 'error' };
    }
  }

  /** Starts one cron task per source with a schedule; returns the ids scheduled. */
  start(): string[] {
    return this.#tasks.start(this.props.sources, (sourceId, date) => this.exec(sourceId, date));
  }

  /** Stops every task: no tick fires after this resolves. */
  stop(): Promise<void> {
    return this.#tasks.stop();
  }
}

/** The invalid cron expressions of `sources` (by `expressionOf`), one message each, naming `key`. */
export function invalidSchedules(
  sources: readonly SourceConfig[],
  expressionOf: (source: SourceConfig) => string | undefined,
  key: string,
): string[] {
  return sources.flatMap((s) => {
    const expression = expressionOf(s);
    return expression === undefined || cron.validate(expression)
      ? []
      : [`sources.${s.id}.${key}: "${expression}" is not a valid cron expression`];
  });
}

/**
 * One node-cron task per source that has a cron expression (`expressionOf`), shared by the sync and
 * the reconciliation schedules: its own log lines at debug (warnings and errors as such), and a
 * tick still waiting (on Redis, during an outage) makes the next ones skip rather than pile up.
 */
export class SourceCronTasks {
  #tasks: ScheduledTask[] = [];

  constructor(
    private readonly props: {
      /** Task names are `${name}:${sourceId}`. */
      name: string;
      expressionOf: (source: SourceConfig) => string | undefined;
      logger: Logger;
      timezone?: string | undefined;
    },
  ) {}

  /** Starts the tasks; returns the ids of the sources scheduled. */
  start(sources: readonly SourceConfig[], run: (sourceId: string, date: Date) => unknown): string[] {
    const scheduled: string[] = [];
    for (const source of sources) {
      const expression = this.props.expressionOf(source);
      if (!expression) continue;
      const log = this.props.logger.child({ sourceId: source.id });
      const task = cron.schedule(expression, (context) => run(source.id, context.date), {
        name: `${this.props.name}:${source.id}`,
        noOverlap: true,
        ...(this.props.timezone ? { timezone: this.props.timezone } : {}),
        logger: {
          info: (message) => log.debug({ cron: true }, message),
          warn: (message) => log.warn({ cron: true }, message),
          error: (message) => log.error({ cron: true }, String(message)),
          debug: (message) => log.debug({ cron: true }, String(message)),
        },
      });
      this.#tasks.push(task);
      scheduled.push(source.id);
    }
    return scheduled;
  }

  /** Stops every task: no tick fires after this resolves. */
  async stop(): Promise<void> {
    const tasks = this.#tasks;
    this.#tasks = [];
    for (const task of tasks) await task.destroy();
  }
}
