import { emptyLimiterStats, type RateLimiterStats } from '../api/rate-limit/types.js';
import type { RetryNotice } from '../api/requests.js';
import type { ProgressEvent } from '../sync/pass-scope.js';
import {
  etaMs,
  type ProgressSnapshot,
  progressText,
  type RetrySnapshot,
  retryText,
} from './progress-text.js';

export interface ProgressLineProps {
  /** Where the line is drawn: stderr. Nothing is drawn unless it is a terminal. */
  stream?: NodeJS.WriteStream;
  /** The rate limiter's stats: time waited, the waits under way, the advertised policy. */
  limiter?: () => RateLimiterStats;
  /** API requests sent so far by this process (to measure requests per row, for the ETA). */
  requests?: () => number;
  now?: () => number;
  /** How often the line is redrawn without events (a rate-limit countdown). Default 1 s. */
  tickMs?: number;
}

const ERASE_LINE = '\r\x1b[2K';

/**
 * A one-line progress display on a terminal (stderr), for the file under way: its rows read, done
 * and failed, the rate limit (time waited; "waiting for the rate limit, resumes in 12 s" while a
 * pause lasts) and an ETA from the rows left and the advertised quota. While the API client
 * retries a request (`onRetry`: the API unreachable at the start of a pass, or failing in its
 * middle), the line says so instead, with the attempt and the time to the next one. Silent when
 * stderr is not a terminal, so logs and pipes stay clean (the JSON logs have each retry); never on
 * stdout.
 */
export class ProgressLine {
  readonly #props: Required<Omit<ProgressLineProps, 'stream'>> & { stream: NodeJS.WriteStream };
  #unit: Omit<ProgressSnapshot, 'waitedMs' | 'resumesInMs' | 'etaMs'> | undefined;
  /** The request being retried, and when its next attempt starts. */
  #retry: { notice: RetrySnapshot['notice']; nextAt: number } | undefined;
  #requestsAtUnitStart = 0;
  #last = 0;
  /** A line is on the screen (erased by `finish`, or when a retry settles before any unit). */
  #drawn = false;
  #ticker: NodeJS.Timeout | undefined;

  constructor(props: ProgressLineProps = {}) {
    this.#props = {
      stream: props.stream ?? process.stderr,
      limiter: props.limiter ?? emptyLimiterStats,
      requests: props.requests ?? (() => 0),
      now: props.now ?? Date.now,
      tickMs: props.tickMs ?? 1000,
    };
  }

  get enabled(): boolean {
    return this.#props.stream.isTTY === true;
  }

  readonly onEvent = (event: ProgressEvent): void => {
    if (event.type === 'unit') {
      this.#unit = {
        unit: event.name,
        expectedRows: event.expectedRecords,
        read: 0,
        done: 0,
        failed: 0,
        duplicateOf: event.duplicateOf,
      };
      this.#requestsAtUnitStart = this.#props.requests();
      this.#startTicking();
    } else if (this.#unit) {
      if (event.type === 'records') this.#unit.read += event.read + event.rejected;
      else {
        this.#unit.done++;
        if (event.outcome === 'failed') this.#unit.failed++;
      }
    }
    this.#render(false);
  };

  /** Told by the API client: a retry starts waiting (drawn at once), or a retried request settled. */
  readonly onRetry = (notice: RetryNotice): void => {
    if (notice.type === 'settled') {
      this.#retry = undefined;
      this.#render(true);
      return;
    }
    this.#retry = { notice, nextAt: this.#props.now() + notice.delayMs };
    this.#startTicking();
    this.#render(true);
  };

  /** The request being retried now, as the line shows it (undefined when none is). */
  retrySnapshot(): RetrySnapshot | undefined {
    if (!this.#retry) return undefined;
    return { notice: this.#retry.notice, nextInMs: this.#retry.nextAt - this.#props.now() };
  }

  /** The line as it would be drawn now (undefined before the first unit). */
  snapshot(): ProgressSnapshot | undefined {
    if (!this.#unit) return undefined;
    const stats = this.#props.limiter();
    const resumesInMs = stats.waiting ? stats.waiting.resumesAt - this.#props.now() : undefined;
    return {
      ...this.#unit,
      waitedMs: stats.heldMs ?? stats.waitedMsTotal,
      resumesInMs,
      etaMs: etaMs({
        expectedRows: this.#unit.expectedRows,
        done: this.#unit.done,
        requests: this.#props.requests() - this.#requestsAtUnitStart,
        policy: stats.policy,
      }),
    };
  }

  /** Erases the line (the summary follows): the pass is over. */
  finish(): void {
    clearInterval(this.#ticker);
    this.#ticker = undefined;
    if (this.enabled && this.#drawn) this.#props.stream.write(ERASE_LINE);
    this.#drawn = false;
  }

  #startTicking(): void {
    if (!this.enabled || this.#ticker) return;
    this.#ticker = setInterval(() => this.#render(true), this.#props.tickMs);
    this.#ticker.unref();
  }

  #render(force: boolean): void {
    if (!this.enabled) return;
    const now = this.#props.now();
    if (!force && now - this.#last < 100) return;
    const retry = this.retrySnapshot();
    const snapshot = retry ? undefined : this.snapshot();
    if (!retry && !snapshot) {
      // A retry settled before any unit started: its line goes.
      if (this.#drawn) this.#props.stream.write(ERASE_LINE);
      this.#drawn = false;
      return;
    }
    this.#last = now;
    this.#drawn = true;
    const line = retry ? retryText(retry) : progressText(snapshot!);
    // A terminal whose size is unknown says 0 columns (`script`, some CI consoles): then 120.
    const columns = this.#props.stream.columns || 120;
    this.#props.stream.write(`${ERASE_LINE}${line.slice(0, columns - 1)}`);
  }
}
