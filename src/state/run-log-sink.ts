import type { DestinationStream } from 'pino';
import { storableCopy } from '../domain/text.js';
import {
  DEFAULT_RUN_LOG_RETENTION,
  type RunLogLine,
  type RunLogRetention,
  type RunLogsRepository,
} from './run-logs.js';

export interface RunLogSinkOptions {
  /** Lines kept per run; the next one says the log was cut, the rest are dropped. Default 1,000. */
  maxLinesPerRun?: number;
  /** Lines waiting for the state DB at most; beyond, new lines are dropped (and counted). Default 10,000. */
  maxBuffered?: number;
  /** Lines that make a write at once. Default 500. */
  batchSize?: number;
  /** How long a line may wait for a write. Default 1 s. */
  flushEveryMs?: number;
  /** Which runs keep their logs (pruned at most once a minute, when a new run logs). */
  retention?: RunLogRetention;
  /** Told when a write or a prune failed (then lines are dropped, never retried: logs never hold a pass). */
  onError?: (error: unknown) => void;
}

/** What the sink did since it was made. */
export interface RunLogSinkStats {
  /** Lines written to the state DB. */
  written: number;
  /** Lines left out: beyond a run's bound, the buffer's, or after `close()`. */
  dropped: number;
  /** Lines lost to a failed write. */
  failed: number;
}

/** Fields every line has, kept in columns of their own or implied by the run. */
const OWN_FIELDS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'app', 'runId', 'sourceId', 'v']);
const PINO_LEVELS: Readonly<Record<number, string>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const MAX_MSG = 2_000;
const MAX_FIELDS_JSON = 8_000;
/** The runs whose line counts are remembered (a run happens in one process, over one stretch of time). */
const REMEMBERED_RUNS = 1_000;
const PRUNE_EVERY_MS = 60_000;

/**
 * A pino destination (`createLogger({ also: [sink] })`) that keeps the lines of a sync run: the
 * JSON lines carrying a `runId` field (the pass's child logger binds it), redacted like every line,
 * into `run_logs`. It never holds a pass up nor fails it: `write` only parses and buffers; lines go
 * to the state DB in batches, in the background; a failed write loses its lines and is counted
 * (and told to `onError`). Bounded: `maxLinesPerRun` lines per run, `maxBuffered` waiting, and the
 * logs of old runs pruned (`retention`). `close()` writes what is left.
 *
 * Made before the state DB is open (the logger comes first); `attach` gives it the repository.
 *
 * @example
 *   const runLog = new RunLogSink();
 *   const logger = createLogger({ level: 'info', also: [runLog] });
 *   runLog.attach(new RunLogsRepository(db));
 *   // ... passes log with their runId ...
 *   await runLog.close();
 */
export class RunLogSink implements DestinationStream {
  readonly #options: Required<Omit<RunLogSinkOptions, 'onError'>> & Pick<RunLogSinkOptions, 'onError'>;
  readonly #stats: RunLogSinkStats = { written: 0, dropped: 0, failed: 0 };
  /** Lines kept per run id (the latest runs only). */
  readonly #perRun = new Map<string, number>();
  #buffer: RunLogLine[] = [];
  #repo: Pick<RunLogsRepository, 'insertMany' | 'prune'> | null = null;
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();
  #pruneDue = false;
  #prunedAt = 0;
  #closed = false;

  constructor(options: RunLogSinkOptions = {}) {
    this.#options = {
      maxLinesPerRun: options.maxLinesPerRun ?? 1_000,
      maxBuffered: options.maxBuffered ?? 10_000,
      batchSize: options.batchSize ?? 500,
      flushEveryMs: options.flushEveryMs ?? 1_000,
      retention: options.retention ?? DEFAULT_RUN_LOG_RETENTION,
      onError: options.onError,
    };
  }

  get stats(): RunLogSinkStats {
    return { ...this.#stats };
  }

  /** The state DB to write to; lines logged before wait for it. */
  attach(repo: Pick<RunLogsRepository, 'insertMany' | 'prune'>): void {
    this.#repo = repo;
    if (this.#buffer.length > 0) this.#schedule();
  }

  /** pino's call: one serialized line. Never throws. */
  write(line: string): void {
    // Most lines are no run's: skipped before any parsing.
    if (!line.includes('"runId"')) return;
    if (this.#closed) {
      this.#stats.dropped++;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      return;
    }
    const entry = toLine(parsed);
    if (!entry) return;
    const kept = this.#perRun.get(entry.runId);
    if (kept === undefined) this.#newRun(entry.runId);
    const count = (kept ?? 0) + 1;
    this.#perRun.set(entry.runId, count);
    const max = this.#options.maxLinesPerRun;
    if (count > max + 1) {
      this.#stats.dropped++;
      return;
    }
    if (this.#buffer.length >= this.#options.maxBuffered) {
      this.#stats.dropped++;
      return;
    }
    this.#buffer.push(
      count === max + 1
        ? {
            ...entry,
            level: 'warn',
            msg: `log cut: only the first ${max} lines of a run are kept`,
            fields: null,
          }
        : entry,
    );
    if (this.#buffer.length >= this.#options.batchSize) this.#flushSoon(0);
    else this.#schedule();
  }

  /** Writes the lines buffered so far (resolves when they are written, or lost and counted). */
  flush(): Promise<void> {
    this.#clearTimer();
    this.#writing = this.#writing.then(() => this.#drain());
    return this.#writing;
  }

  /** Takes no more lines and writes the ones buffered. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
  }

  #newRun(runId: string): void {
    this.#pruneDue = true;
    if (this.#perRun.size >= REMEMBERED_RUNS) {
      const oldest = this.#perRun.keys().next().value;
      if (oldest !== undefined) this.#perRun.delete(oldest);
    }
    this.#perRun.set(runId, 0);
  }

  #schedule(): void {
    if (this.#timer === null) this.#flushSoon(this.#options.flushEveryMs);
  }

  #flushSoon(ms: number): void {
    this.#clearTimer();
    this.#timer = setTimeout(() => {
      this.#timer = null;
      void this.flush();
    }, ms);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  async #drain(): Promise<void> {
    const repo = this.#repo;
    if (!repo) return;
    while (this.#buffer.length > 0) {
      const lines = this.#buffer.splice(0, this.#options.batchSize);
      try {
        await repo.insertMany(lines);
        this.#stats.written += lines.length;
      } catch (error) {
        this.#stats.failed += lines.length;
        this.#options.onError?.(error);
      }
    }
    if (this.#pruneDue && Date.now() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#pruneDue = false;
      this.#prunedAt = Date.now();
      await repo.prune(this.#options.retention).catch((error: unknown) => this.#options.onError?.(error));
    }
  }
}

/** A pino line as a run log line; null when it carries no usable run id. */
function toLine(parsed: unknown): RunLogLine | null {
  if (typeof parsed !== 'object' || parsed === null) return null;
  const line = parsed as Record<string, unknown>;
  const runId = typeof line.runId === 'number' ? String(line.runId) : line.runId;
  if (typeof runId !== 'string' || !/^\d{1,18}$/.test(runId)) return null;
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(line)) if (!OWN_FIELDS.has(key)) fields[key] = value;
  return {
    runId,
    at: timeOf(line.time),
    level: levelOf(line.level),
    msg: storableCopy(typeof line.msg === 'string' ? line.msg.slice(0, MAX_MSG) : ''),
    fields: Object.keys(fields).length === 0 ? null : boundedFields(fields),
  };
}

/** pino writes epoch milliseconds; a custom format may write ISO text. */
function timeOf(time: unknown): Date {
  const at = typeof time === 'number' || typeof time === 'string' ? new Date(time) : new Date();
  return Number.isNaN(at.getTime()) ? new Date() : at;
}

/** pino writes the level's number; a custom format may write its label. */
function levelOf(level: unknown): string {
  if (typeof level === 'number') return PINO_LEVELS[level] ?? String(level);
  return typeof level === 'string' ? level.slice(0, 20) : 'info';
}

function boundedFields(fields: Record<string, unknown>): Record<string, unknown> {
  const json = JSON.stringify(fields);
  const stored = json.length <= MAX_FIELDS_JSON ? fields : { cut: `${json.slice(0, MAX_FIELDS_JSON)}…` };
  return storableCopy(stored);
}
