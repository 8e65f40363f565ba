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
  #tasks: ScheduledTask[] = [];

  constructor(private readonly props: SourceSchedulesProps) {}

  /** The invalid schedules, one message each (checked before anything starts). */
  static problems(sources: readonly SourceConfig[]): string[] {
    return sources
      .filter((s) => s.schedule !== undefined && !cron.validate(s.schedule))
      .map((s) => `sources.${s.id}.schedule: "${s.schedule}" is not a valid cron expression`);
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
    const scheduled: string[] = [];
    for (const source of this.props.sources) {
      if (!source.schedule) continue;
      const task = scheduleTask({
        name: `source-sync:${source.id}`,
        expression: source.schedule,
        run: (date) => this.exec(source.id, date),
        logger: this.props.logger.child({ sourceId: source.id }),
        timezone: this.props.timezone,
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

/**
 * One node-cron task: its own log lines at debug (warnings and errors as such), and a tick still
 * waiting (on Redis, during an outage) makes the next ones skip rather than pile up. Shared by the
 * sync and the reconciliation schedules.
 */
export function scheduleTask(props: {
  name: string;
  expression: string;
  run: (date: Date) => unknown;
  logger: Logger;
  timezone?: string | undefined;
}): ScheduledTask {
  const log = props.logger;
  return cron.schedule(props.expression, (context) => props.run(context.date), {
    name: props.name,
    noOverlap: true,
    ...(props.timezone ? { timezone: props.timezone } : {}),
    logger: {
      info: (message) => log.debug({ cron: true }, message),
      warn: (message) => log.warn({ cron: true }, message),
      error: (message) => log.error({ cron: true }, String(message)),
      debug: (message) => log.debug({ cron: true }, String(message)),
    },
  });
}
