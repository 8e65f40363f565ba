import { type LogEntry, prettyLine } from './pretty-line.js';
import { PLAIN, type TerminalStyle } from './terminal-style.js';

/** Where the readable lines go: a sonic-boom destination, `process.stderr`, any writable. */
export interface TextSink {
  write(text: string): unknown;
  flush?(callback?: (error?: Error | null) => void): void;
}

export interface PrettyLogStreamProps {
  sink: TextSink;
  /**
   * The sink is a terminal: each line first erases the line the cursor is on (the CLI's progress
   * line, redrawn after), so a log line never lands in the middle of it.
   */
  terminal: boolean;
  /** Colours the level of warnings and errors (default none). */
  style?: TerminalStyle;
}

const ERASE_LINE = '\r\x1b[2K';

/**
 * A pino destination that turns each JSON line into a readable one (`prettyLine`). It reads the
 * line pino wrote, so redaction already happened; a chunk that is not a JSON entry goes through as it is.
 *
 * @example
 * const logger = pino({ redact }, new PrettyLogStream({ sink: pino.destination(2), terminal: true }));
 */
export class PrettyLogStream {
  readonly #props: PrettyLogStreamProps;

  constructor(props: PrettyLogStreamProps) {
    this.#props = props;
  }

  write(chunk: string): boolean {
    const prefix = this.#props.terminal ? ERASE_LINE : '';
    let entry: LogEntry | undefined;
    try {
      const parsed: unknown = JSON.parse(chunk);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) entry = parsed as LogEntry;
    } catch {
      entry = undefined;
    }
    const line = entry ? `${prettyLine(entry, this.#props.style ?? PLAIN)}\n` : chunk;
    this.#props.sink.write(`${prefix}${line}`);
    return true;
  }

  flush(callback?: (error?: Error | null) => void): void {
    if (this.#props.sink.flush) this.#props.sink.flush(callback);
    else callback?.();
  }
}
