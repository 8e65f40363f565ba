import type { Sleep } from '../../../src/api/rate-limit/types.js';
import { ManualClock } from '../../../src/domain/clock.js';

/** Virtual time: `sleep` registers a timer; `run` moves the clock to the next timer whenever nothing else can progress. */
export class VirtualTime {
  readonly clock = new ManualClock('2026-01-15T10:00:00.000Z');
  readonly start = this.clock.now().getTime();
  #timers: { at: number; resolve: () => void }[] = [];
  /** The most timers pending at once (how many callers slept on a timer together). */
  maxPending = 0;

  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const timer = { at: this.clock.now().getTime() + ms, resolve };
      this.#timers.push(timer);
      this.maxPending = Math.max(this.maxPending, this.#timers.length);
      signal?.addEventListener(
        'abort',
        () => {
          this.#timers = this.#timers.filter((t) => t !== timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });

  /** Milliseconds since the start. */
  get t(): number {
    return this.clock.now().getTime() - this.start;
  }

  async run<T>(work: Promise<T>): Promise<T> {
    let done = false;
    work.then(
      () => (done = true),
      () => (done = true),
    );
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (done) return work;
      this.#timers.sort((a, b) => a.at - b.at);
      const next = this.#timers.shift();
      if (!next) throw new Error('deadlock: nothing to wait for');
      if (next.at > this.clock.now().getTime()) this.clock.set(next.at);
      next.resolve();
    }
  }
}
