import { CronExpressionParser } from 'cron-parser';
import cronstrue from 'cronstrue';

/** A source's schedule as a person reads it. */
export interface ScheduleView {
  expression: string;
  /** "Every 5 minutes", "At 02:30, Monday through Friday". */
  words: string;
  /** The next tick after `now`, in the worker's time zone (the process's); null when there is none. */
  next: Date | null;
}

/**
 * The words (cronstrue) and the next tick (cron-parser) of a cron expression as the worker's
 * schedules take it (node-cron: five fields, or six with seconds first). A schedule neither library
 * reads is shown as it is.
 */
export function scheduleView(expression: string, now: Date): ScheduleView {
  let words = expression;
  try {
    words = cronstrue.toString(expression, { use24HourTimeFormat: true, throwExceptionOnParseError: true });
  } catch {
    // Shown as written.
  }
  let next: Date | null = null;
  try {
    next = CronExpressionParser.parse(expression, { currentDate: now }).next().toDate();
  } catch {
    // No next time to show.
  }
  return { expression, words, next };
}
