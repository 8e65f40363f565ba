import type { Redis } from 'ioredis';
import type { Sleep } from '../../src/api/rate-limit/types.js';
import { ManualClock } from '../../src/domain/clock.js';

/** Turns of the event loop without any news after which nothing else can progress but a timer. */
const QUIET_TURNS = 3;

/** Statuses whose response has no body (`new Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

interface Timer {
  at: number;
  resolve: () => void;
}

/**
 * Virtual time for the rate limiters' tests: a `ManualClock` and a `Sleep` on it. `run(work)` moves
 * the clock to the earliest pending sleep whenever nothing else can progress: no command of a
 * `watch`ed Redis connection and no request of its `fetch` awaits an answer, and a few turns of the
 * event loop passed with no new sleep. Windows, pauses and pacing of seconds then run in
 * milliseconds, in the order they would in real time (Redis answers before time moves on). Give
 * the Redis limiter `timeSource: 'clock'` so its scripts take "now" from `clock`.
 *
 * @example
 * const time = new VirtualTime();
 * const limiter = new RedisRateLimiter({ redis: time.watch(redis), prefix, clock: time.clock, sleep: time.sleep, timeSource: 'clock' });
 * await time.run(Promise.all([limiter.acquire(key), limiter.acquire(key)])); // the second one waits a span, at once
 */
export class VirtualTime {
  readonly clock: ManualClock;
  readonly start: number;
  /** The most timers pending at once (how many callers slept on a timer together). */
  maxPending = 0;
  #timers: Timer[] = [];
  /** Redis commands and HTTP requests awaiting their answer. */
  #busy = 0;
  /** Bumped by every sleep, command and request, started or settled: "something happened". */
  #news = 0;
  #whenIdle: Array<() => void> = [];

  constructor(start: Date | string | number = '2026-01-15T10:00:00.000Z') {
    this.clock = new ManualClock(start);
    this.start = this.clock.now().getTime();
  }

  /** Resolves once the clock reaches now + `ms` (moved by `run`); rejects with the signal's reason. */
  readonly sleep: Sleep = (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      this.#news++;
      const timer: Timer = { at: this.clock.now().getTime() + ms, resolve };
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

  /** `AbortSignal.timeout(ms)` on this clock. */
  timeout(ms: number): AbortSignal {
    const controller = new AbortController();
    void this.sleep(ms).then(() =>
      controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    );
    return controller.signal;
  }

  /** Lets everything that can go on go on, without moving the clock (inside `run`). */
  settle(): Promise<void> {
    return this.sleep(0);
  }

  /** Holds the clock while a command of `redis` awaits its reply; returns `redis`. */
  watch<R extends Redis>(redis: R): R {
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command, stream) => {
      void this.#hold(command.promise);
      return send(command, stream);
    }) as R['sendCommand'];
    return redis;
  }

  /** A `fetch` that holds the clock until a response is read whole (the body read before it resolves). */
  fetch(inner: typeof fetch = fetch): typeof fetch {
    return (input, init) =>
      this.#hold(
        (async () => {
          const response = await inner(input, init);
          const body = await response.arrayBuffer();
          const { status, statusText, headers } = response;
          return new Response(NULL_BODY_STATUSES.has(status) ? null : body, { status, statusText, headers });
        })(),
      );
  }

  /**
   * Runs until `work` settles, moving the clock to the next pending sleep (and waking it) each time
   * nothing else can progress; throws when nothing can and no sleep is pending.
   */
  async run<T>(work: Promise<T>): Promise<T> {
    let done = false;
    work.then(
      () => (done = true),
      () => (done = true),
    );
    for (;;) {
      await this.#quiet();
      if (done) return work;
      this.#timers.sort((a, b) => a.at - b.at);
      const next = this.#timers.shift();
      if (!next) throw new Error('deadlock: nothing to wait for');
      if (next.at > this.clock.now().getTime()) this.clock.set(next.at);
      next.resolve();
    }
  }

  #hold<T>(work: Promise<T>): Promise<T> {
    this.#busy++;
    this.#news++;
    const settled = () => {
      this.#busy--;
      this.#news++;
      if (this.#busy === 0) for (const idle of this.#whenIdle.splice(0)) idle();
    };
    work.then(settled, settled);
    return work;
  }

  /** Until nothing is awaited but timers: nothing held, and no news for a few turns. */
  async #quiet(): Promise<void> {
    for (let still = 0; still < QUIET_TURNS; ) {
      if (this.#busy > 0) {
        await new Promise<void>((resolve) => this.#whenIdle.push(resolve));
        still = 0;
        continue;
      }
      const news = this.#news;
      await new Promise((resolve) => setImmediate(resolve));
      still = news === this.#news && this.#busy === 0 ? still + 1 : 0;
    }
  }
}
