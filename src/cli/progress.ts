import type { ProgressEvent } from '../sync/pass-scope.js';

/**
 * A one-line progress display on a terminal (stderr): rows read, operations done, time waited on
 * the rate limit. Silent when stderr is not a terminal, so logs and pipes stay clean.
 */
export class ProgressLine {
  #read = 0;
  #rejected = 0;
  #done = 0;
  #failed = 0;
  #unit = '';
  #last = 0;

  constructor(
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly waitedMs: () => number = () => 0,
  ) {}

  get enabled(): boolean {
    return this.stream.isTTY === true;
  }

  readonly onEvent = (event: ProgressEvent): void => {
    if (event.type === 'unit') this.#unit = event.name;
    else if (event.type === 'records') {
      this.#read += event.read + event.rejected;
      this.#rejected += event.rejected;
    } else {
      this.#done++;
      if (event.outcome === 'failed') this.#failed++;
    }
    this.#render(false);
  };

  finish(): void {
    this.#render(true);
    if (this.enabled) this.stream.write('\n');
  }

  #render(force: boolean): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.#last < 100) return;
    this.#last = now;
    const waited = (this.waitedMs() / 1000).toFixed(1);
    const line = `${this.#unit}  rows read ${this.#read}  done ${this.#done}  failed ${this.#failed}  (rejected ${this.#rejected})  rate-limit wait ${waited}s`;
    this.stream.write(`\r\x1b[2K${line.slice(0, (this.stream.columns ?? 120) - 1)}`);
  }
}
