import type { RateLimiterStats } from './types.js';

/**
 * The `acquire` calls sleeping for the budget right now, each with the time it wakes, and the wall
 * time during which any was: what a progress display shows ("waiting for the rate limit, resumes
 * in 12 s", "waited 47.0 s"). It only watches the sleeps; when and how long to sleep stays the
 * limiter's decision.
 */
export class WaitBoard {
  readonly #now: () => number;
  readonly #wakes = new Map<number, number>();
  #next = 0;
  /** When the current stretch of waiting began (some caller has been waiting since). */
  #since: number | undefined;
  #heldMs = 0;

  readonly #queued: () => number;

  /** `queued`: the callers waiting behind a sleeping one for their turn (`FairLine`), counted in `calls`. */
  constructor(now: () => number, queued: () => number = () => 0) {
    this.#now = now;
    this.#queued = queued;
  }

  /** Counts the caller as waiting until `wakesAt` (epoch ms) while `sleep` runs. */
  async during<T>(wakesAt: number, sleep: Promise<T>): Promise<T> {
    const id = this.#next++;
    if (this.#wakes.size === 0) this.#since = this.#now();
    this.#wakes.set(id, wakesAt);
    try {
      return await sleep;
    } finally {
      this.#wakes.delete(id);
      if (this.#wakes.size === 0 && this.#since !== undefined) {
        this.#heldMs += this.#now() - this.#since;
        this.#since = undefined;
      }
    }
  }

  /** The callers waiting, and the first wake (requests flow again then); undefined when none waits. */
  get waiting(): RateLimiterStats['waiting'] {
    if (this.#wakes.size === 0) return undefined;
    return { calls: this.#wakes.size + this.#queued(), resumesAt: Math.min(...this.#wakes.values()) };
  }

  /** Wall-clock milliseconds during which at least one caller was waiting (the current stretch included). */
  get heldMs(): number {
    return this.#heldMs + (this.#since === undefined ? 0 : this.#now() - this.#since);
  }

  /** The limiter's stats of the waits: who waits now and until when, and the time held up. */
  report(): Pick<RateLimiterStats, 'waiting' | 'heldMs'> {
    const waiting = this.waiting;
    return { ...(waiting ? { waiting } : {}), heldMs: this.heldMs };
  }
}
