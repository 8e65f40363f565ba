import type { RateLimitPolicy } from '../api/rate-limit/types.js';
import type { RetryNotice } from '../api/requests.js';
import { printable } from '../logging/printable-text.js';

/** What the progress line shows at one moment: the file (unit) under way and the rate limit. */
export interface ProgressSnapshot {
  /** The unit (file) under way. */
  unit: string;
  /** About how many rows it holds, when the source could tell. */
  expectedRows?: number | undefined;
  /** Rows of this unit read so far (refused ones included), those done (synced, unchanged or failed), those failed. */
  read: number;
  done: number;
  failed: number;
  /** The unit is skipped: same content as this file, synced before. */
  duplicateOf?: { name: string } | undefined;
  /** Milliseconds the rate limit held this process up, in total. */
  waitedMs: number;
  /** Waiting for the rate limit now: requests flow again in this many milliseconds. */
  resumesInMs?: number | undefined;
  /** The estimated time left for this unit (see `etaMs`). */
  etaMs?: number | undefined;
}

/** A request the API client is retrying, as the progress line shows it. */
export interface RetrySnapshot {
  notice: Extract<RetryNotice, { type: 'retrying' }>;
  /** The next attempt starts in this many milliseconds (0 or less: it is under way). */
  nextInMs: number;
}

/** An estimate shorter than this is not shown: it would only flicker. */
export const MIN_ETA_MS = 10_000;
/** A wait shorter than this is not announced. */
export const MIN_WAIT_MS = 1_000;

const count = (n: number) => n.toLocaleString('en-US');

/** `45 s`, `12 min`, `1 h 05 min`. */
export function durationText(ms: number): string {
  const seconds = Math.max(0, Math.ceil(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/**
 * The time the rows still to do take at the advertised quota (RateLimit-Policy, e.g. 300 per 60 s):
 * rows left × requests per row (as measured so far in the unit; 1 before any is done) ÷ the quota's
 * rate. Undefined when the size of the unit or the policy is unknown.
 */
export function etaMs(input: {
  expectedRows: number | undefined;
  done: number;
  /** API requests sent for this unit so far. */
  requests: number;
  policy: RateLimitPolicy | undefined;
}): number | undefined {
  const { expectedRows, done, requests, policy } = input;
  if (expectedRows === undefined || !policy || policy.quota <= 0) return undefined;
  const perRow = done > 0 ? requests / done : 1;
  const requestsLeft = Math.max(0, expectedRows - done) * perRow;
  return (requestsLeft * policy.windowSeconds * 1000) / policy.quota;
}

/** Why the API is retried, in words: `is not answering (NETWORK_ERROR)`, `answered HTTP 503`. */
function retryCause(notice: RetrySnapshot['notice']): string {
  if (notice.status === 429) return 'answered 429 (rate limited)';
  if (notice.status !== undefined) return `answered HTTP ${notice.status} (${notice.code})`;
  return `is not answering (${notice.code})`;
}

/**
 * `the API at https://api.example is not answering (NETWORK_ERROR): attempt 3 of 8 failed, next in
 * 4 s (GET /api/public/v1/organizations)`: what a pass waits for while the client retries (a
 * terminal would otherwise stay silent for the whole backoff, 20 s and more).
 */
export function retryText(r: RetrySnapshot): string {
  const { notice } = r;
  const next =
    r.nextInMs >= MIN_WAIT_MS
      ? `attempt ${notice.attempt} of ${notice.maxAttempts} failed, next in ${durationText(r.nextInMs)}`
      : `attempt ${notice.attempt + 1} of ${notice.maxAttempts} under way`;
  // The request last: a narrow terminal cuts it first.
  return printable(
    `the API at ${notice.baseUrl} ${retryCause(notice)}: ${next} (${notice.method} ${notice.path})`,
  );
}

/**
 * `invoices.csv: 412 of ~1,000 rows read, 380 done, 2 failed | waiting for the rate limit, resumes in 12 s | ETA ~4 min`.
 * The file name is the dropper's: its control characters are escaped (it is drawn on a terminal).
 */
export function progressText(s: ProgressSnapshot): string {
  if (s.duplicateOf) return printable(`${s.unit}: same content as ${s.duplicateOf.name}, skipped`);
  const of = s.expectedRows !== undefined ? ` of ~${count(Math.max(s.expectedRows, s.read))}` : '';
  const parts = [
    `${s.unit}: ${count(s.read)}${of} rows read, ${count(s.done)} done, ${count(s.failed)} failed`,
  ];
  if (s.resumesInMs !== undefined && s.resumesInMs >= MIN_WAIT_MS)
    parts.push(`waiting for the rate limit, resumes in ${durationText(s.resumesInMs)}`);
  else if (s.waitedMs > 0) parts.push(`waited ${(s.waitedMs / 1000).toFixed(1)} s for the rate limit`);
  if (s.etaMs !== undefined && s.etaMs >= MIN_ETA_MS) parts.push(`ETA ~${durationText(s.etaMs)}`);
  return printable(parts.join(' | '));
}
