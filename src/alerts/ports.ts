import type { AlertEvent } from './events.js';
import type { AlertTarget } from './targets.js';

/**
 * How an alert reaches a target: the worker's queue (`src/jobs/alert-queue.ts`: BullMQ attempts and
 * backoff, delivered by the worker), or an HTTP delivery from this process (`DirectAlertTransport`,
 * for `sync --once`).
 */
export interface AlertTransport {
  /** Hands one event over for one target; resolves once it is queued (or delivered, or given up). */
  send(target: AlertTarget, event: AlertEvent): Promise<void>;
  /** Gives up what is still under way after at most `limitMs`; never throws. */
  close(limitMs: number): Promise<void>;
}

/** Holds back an event that repeats (see `throttleOf`), across processes when it can (Redis). */
export interface AlertThrottle {
  /** True when nothing claimed `key` within the last `windowMs` (and claims it now). */
  claim(key: string, windowMs: number): Promise<boolean>;
}

/** Where anything that happens is told. Never throws, never waits: the sync is not held up. */
export interface AlertSink {
  notify(event: AlertEvent): void;
}

/**
 * What the pass watch reads and writes in the state DB (`PausedSources` implements it).
 */
export interface SourceHealthStore {
  /** The consecutive failed runs ending the source's history since its last resume, up to `max`. */
  failedRunStreak(sourceId: string, max: number): Promise<{ count: number; lastError: string | null }>;
  /** The failures a run opened (not those it failed again). */
  newFailuresOf(sourceId: string, runId: string): Promise<number>;
  /**
   * Of those, the files it could not read at all (file-level failures, stage `file`): the file's
   * name and why. A file rejected again while its failure is open is not new.
   */
  newRejectedFilesOf(sourceId: string, runId: string): Promise<Array<{ file: string; reason: string }>>;
  /** Pauses the source as `auto` unless it is paused; true when this call paused it. */
  pauseAutomatically(sourceId: string, reason: string): Promise<boolean>;
}
