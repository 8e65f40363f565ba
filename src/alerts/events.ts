import { randomUUID } from 'node:crypto';
import type { AlertEventType } from '../config/schema.js';
import type { Clock } from '../domain/clock.js';
import { errorCodeOf, messageOf } from '../domain/errors.js';
import { printable } from '../logging/printable-text.js';

export type { AlertEventType };

/**
 * One thing worth telling someone. The same object goes to every target (each shapes its own
 * body) and stays the same across delivery retries: `id` lets a receiver drop a duplicate.
 */
export interface AlertEvent {
  id: string;
  type: AlertEventType;
  /** ISO 8601. */
  occurredAt: string;
  /** The source concerned; null for what concerns the whole deployment (the token, a start that failed). */
  sourceId: string | null;
  /** One line for a person: what happened and what to do. */
  summary: string;
  /** The facts, for machines (`runId`, `errorCode`, `newFailures`, `expiresAt`...). */
  details: Record<string, string | number | null>;
}

const base = (type: AlertEventType, sourceId: string | null, clock: Clock) => ({
  id: randomUUID(),
  type,
  occurredAt: clock.now().toISOString(),
  sourceId,
});

/** Alert texts stay readable in a chat: a huge error message (a stack, a payload) is cut. */
export const clip = (text: string, max = 500): string =>
  text.length > max ? `${text.slice(0, max)}…` : text;

/** A pass could not run (config, credentials, the API, the state DB...); `sourceId` null: nothing could start. */
export function runFailedEvent(input: { sourceId: string | null; error: unknown }, clock: Clock): AlertEvent {
  const code = errorCodeOf(input.error) ?? null;
  const message = clip(messageOf(input.error));
  const why = code ? `(${code}) ${message}` : message;
  return {
    ...base('run.failed', input.sourceId, clock),
    summary: input.sourceId
      ? `${input.sourceId}: the pass could not run: ${why}`
      : `the sync could not start: ${why}`,
    details: { errorCode: code, error: message },
  };
}

/**
 * A run recorded at least `threshold` new failures (records the service or the validation refused),
 * or could not read a file at all (`rejectedFiles`: whatever the threshold, as none of the file's
 * rows was synced, however many it holds).
 */
export function newFailuresEvent(
  input: {
    sourceId: string;
    runId: string;
    newFailures: number;
    threshold: number;
    rejectedFiles?: ReadonlyArray<{ file: string; reason: string }>;
  },
  clock: Clock,
): AlertEvent {
  // Names and reasons come from the dropped file: escaped, so a chat shows one line of each.
  const files = (input.rejectedFiles ?? []).map((f) => ({
    file: printable(f.file),
    reason: printable(f.reason),
  }));
  const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`;
  const list = `\`receivables-sync failures --source ${input.sourceId}\` lists them`;
  const summary =
    files.length === 0
      ? `${input.sourceId}: run #${input.runId} recorded ${plural(input.newFailures, 'new failure')} (threshold ${input.threshold}): ${list}`
      : `${input.sourceId}: run #${input.runId} could not read ` +
        (files.length === 1 ? `${files[0]!.file}: ${clip(files[0]!.reason)}` : plural(files.length, 'file')) +
        ` (set aside in the drop folder's rejected/: fix ${files.length === 1 ? 'it' : 'them'}, or the source's configuration, and drop ${files.length === 1 ? 'it' : 'them'} again); ` +
        `${plural(input.newFailures, 'new failure')} in all: ${list}`;
  return {
    ...base('run.new-failures', input.sourceId, clock),
    summary,
    details: {
      runId: input.runId,
      newFailures: input.newFailures,
      threshold: input.threshold,
      ...(files.length > 0
        ? {
            rejectedFiles: files.length,
            files: clip(files.map((f) => f.file).join(', ')),
            reason: clip(files[0]!.reason),
          }
        : {}),
    },
  };
}

/** The reason stored with an automatic pause, and shown on the dashboard. */
export const autoPauseReason = (failedRuns: number, lastError: string | null): string =>
  `paused automatically after ${failedRuns} failed run${failedRuns === 1 ? '' : 's'}${lastError ? `: ${clip(lastError)}` : ''}`;

/** A source was paused automatically after consecutive failed runs. */
export function sourcePausedEvent(
  input: { sourceId: string; failedRuns: number; lastError: string | null },
  clock: Clock,
): AlertEvent {
  return {
    ...base('source.paused', input.sourceId, clock),
    summary: `${input.sourceId} ${autoPauseReason(input.failedRuns, input.lastError)}. Fix the cause, then resume it on the dashboard`,
    details: {
      failedRuns: input.failedRuns,
      lastError: input.lastError === null ? null : clip(input.lastError),
    },
  };
}

/** The authorization server (or the API) refused the credentials: nothing syncs until a new login. */
export function tokenRefusedEvent(error: unknown, clock: Clock): AlertEvent {
  const message = clip(messageOf(error));
  return {
    ...base('token.refused', null, clock),
    summary: `the credentials were refused: ${message}`,
    details: { errorCode: errorCodeOf(error) ?? null, error: message },
  };
}

/** The server said when the refresh token expires, and it is soon. */
export function tokenExpiringEvent(expiresAt: Date, clock: Clock): AlertEvent {
  const days = Math.max(0, (expiresAt.getTime() - clock.now().getTime()) / 86_400_000);
  const left =
    days < 1 ? `${Math.round(days * 24)} h` : `${Math.floor(days)} day${Math.floor(days) === 1 ? '' : 's'}`;
  return {
    ...base('token.expiring', null, clock),
    summary: `the refresh token expires on ${expiresAt.toISOString()} (in ${left}): run \`receivables-sync auth login\` before then`,
    details: { expiresAt: expiresAt.toISOString(), daysLeft: Math.floor(days) },
  };
}

/**
 * Events that repeat while their cause lasts are sent once per window: `run.failed` per source and
 * `token.refused` once per `repeatMinutes`, `token.expiring` once a day. The others are each a new
 * fact (a run's new failures, a pause), never held back. Null: no throttle.
 */
export function throttleOf(
  event: AlertEvent,
  repeatMinutes: number,
): { key: string; windowMs: number } | null {
  const repeatMs = Math.round(repeatMinutes * 60_000);
  switch (event.type) {
    case 'run.failed':
      return repeatMs > 0 ? { key: `run.failed:${event.sourceId ?? '*'}`, windowMs: repeatMs } : null;
    case 'token.refused':
      return repeatMs > 0 ? { key: 'token.refused', windowMs: repeatMs } : null;
    case 'token.expiring':
      return { key: 'token.expiring', windowMs: 86_400_000 };
    default:
      return null;
  }
}
