import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { Logger } from '../../logging/logger.js';
import { SingerSourceError } from './errors.js';

/** Lines of the tap's stderr kept for the error that says why it failed. */
const STDERR_LINES = 20;
/** How long a tap has to stop after SIGTERM before it is killed. */
const TERM_GRACE_MS = 5_000;

export interface TapProps {
  /** The tap's argv (`command`), its own arguments added (`--config c.json --state s.json ...`). */
  argv: readonly string[];
  cwd: string;
  /** Seconds the tap may write nothing while it is waited on (0 = no limit). */
  timeoutSeconds: number;
  logger: Logger;
}

/**
 * A tap as a child process: its stdout read line by line with backpressure (a line is read only when
 * asked for: a tap writing faster than the API takes records waits on its pipe, and memory stays
 * bounded), its stderr logged and its last lines kept, a silence longer than `timeoutSeconds` while
 * the source waits on it ended by stopping it. The tap runs in its own process group, so a tap that
 * is a shell script stops with its children.
 */
export class TapProcess {
  readonly #child: ChildProcess;
  readonly #props: TapProps;
  readonly #stderr: string[] = [];
  readonly #exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #timedOut = false;
  #startError: Error | null = null;
  #exitedAlready = false;

  constructor(props: TapProps) {
    this.#props = props;
    const [program, ...args] = props.argv;
    this.#child = spawn(program!, args, {
      cwd: props.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    this.#exited = new Promise((resolve) => {
      this.#child.once('error', (error) => {
        this.#startError = error;
        this.#exitedAlready = true;
        resolve({ code: null, signal: null });
      });
      this.#child.once('close', (code, signal) => {
        this.#exitedAlready = true;
        resolve({ code, signal });
      });
    });
    this.#readStderr(this.#child.stderr!);
  }

  /** The tap's stdout, line by line; the silence limit applies while a line is awaited. */
  lines(): AsyncGenerator<string> {
    return readLines(this.#child.stdout!, () => {
      const timer = this.#armTimeout();
      return () => clearTimeout(timer);
    });
  }

  /** Waits for the tap to exit; throws when it failed (a non-zero code, a signal, hung, not started). */
  async finished(): Promise<void> {
    const { code, signal } = await this.#exited;
    const tail = this.#tail();
    if (this.#startError) {
      throw new SingerSourceError(
        'SINGER_TAP_START_FAILED',
        `the tap could not be started (${this.#props.argv[0]}): ${this.#startError.message}`,
        { cause: this.#startError },
      );
    }
    if (this.#timedOut) {
      throw new SingerSourceError(
        'SINGER_TAP_TIMEOUT',
        `the tap wrote nothing for ${this.#props.timeoutSeconds} s (timeoutSeconds) and was stopped${tail}`,
      );
    }
    if (code !== 0) {
      const how = signal !== null ? `was killed (${signal})` : `exited with code ${code}`;
      throw new SingerSourceError('SINGER_TAP_FAILED', `the tap ${how}${tail}`);
    }
  }

  /** Stops the tap (SIGTERM, then SIGKILL after a grace period) and waits for it. */
  async stop(): Promise<void> {
    if (this.#exitedAlready) return;
    this.#signal('SIGTERM');
    const kill = setTimeout(() => this.#signal('SIGKILL'), TERM_GRACE_MS);
    await this.#exited;
    clearTimeout(kill);
  }

  #armTimeout(): NodeJS.Timeout | undefined {
    const { timeoutSeconds } = this.#props;
    if (timeoutSeconds === 0) return undefined;
    return setTimeout(() => {
      this.#timedOut = true;
      this.#props.logger.error({ timeoutSeconds }, 'the tap wrote nothing for too long: stopping it');
      void this.stop();
    }, timeoutSeconds * 1000);
  }

  #signal(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      this.#child.kill(signal);
    }
  }

  #readStderr(stderr: Readable): void {
    stderr.setEncoding('utf8');
    let rest = '';
    stderr.on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) this.#keep(line);
    });
    stderr.on('end', () => {
      if (rest !== '') this.#keep(rest);
    });
  }

  #keep(line: string): void {
    const text = line.replace(/\r$/, '');
    if (text.trim() === '') return;
    this.#props.logger.debug({ tap: text }, 'tap stderr');
    this.#stderr.push(text);
    if (this.#stderr.length > STDERR_LINES) this.#stderr.shift();
  }

  /** `; its last stderr lines: ...` or nothing. */
  #tail(): string {
    if (this.#stderr.length === 0) return '';
    return `; its last stderr lines:\n${this.#stderr.map((l) => `  ${l}`).join('\n')}`;
  }
}

/** Runs the tap to its end and returns its whole stdout (`--discover`): bounded to 64 MB. */
export async function tapOutput(props: TapProps): Promise<string> {
  const tap = new TapProcess(props);
  const lines: string[] = [];
  let size = 0;
  for await (const line of tap.lines()) {
    size += line.length;
    if (size > 64 * 1024 * 1024) {
      await tap.stop();
      throw new SingerSourceError('SINGER_DISCOVERY_FAILED', 'the tap wrote more than 64 MB for --discover');
    }
    lines.push(line);
  }
  await tap.finished();
  return lines.join('\n');
}

/**
 * The lines of a stream (a tap's stdout, the target's stdin), read as they are asked for: nothing is
 * read ahead of the consumer but the stream's own buffer. `waiting` is called before each read and
 * returns what to call once it is done (the tap's silence limit).
 */
export async function* readLines(stream: Readable, waiting?: () => () => void): AsyncGenerator<string> {
  stream.setEncoding('utf8');
  const chunks = stream[Symbol.asyncIterator]() as AsyncIterator<string>;
  let rest = '';
  try {
    for (;;) {
      const done = waiting?.();
      const next = await chunks.next().finally(() => done?.());
      if (next.done) break;
      const chunk = next.value;
      let start = 0;
      for (let end = chunk.indexOf('\n'); end !== -1; end = chunk.indexOf('\n', start)) {
        const line = rest === '' ? chunk.slice(start, end) : rest + chunk.slice(start, end);
        rest = '';
        start = end + 1;
        yield line.endsWith('\r') ? line.slice(0, -1) : line;
      }
      rest += chunk.slice(start);
    }
    if (rest !== '') yield rest;
  } finally {
    await chunks.return?.();
  }
}
