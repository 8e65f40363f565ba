/**
 * The `acquire` calls of one process waiting for one key, in arrival order: only the first one (the
 * head) checks the budget and sleeps until the time the check names; the others wait for their turn
 * without timers. When the head is admitted the next one checks at once, so a freed slot wakes one
 * caller per process, not every caller (each check of the Redis limiter is a Lua call). The line of
 * the token bucket (limiter-token-bucket.ts), the baseline `npm run bench:limiter` measures: it is
 * first-come, so it cannot order flows (the production limiters admit by fair queuing: `FairLine` in
 * memory, one ticket per waiter in Redis).
 *
 * @example
 * const line = new WaiterLine();
 * await line.turn(key, async () => { for (;;) { if (await tryTake(key)) return; await sleep(ms, signal); } }, signal);
 */
export class WaiterLine {
  readonly #lines = new Map<string, Waiter[]>();
  readonly #sharedFailure: (error: unknown) => boolean;

  /**
   * @param sharedFailure A failure of the head that every caller behind it would meet too (the
   *   limiter's Redis is down): they are rejected with it at once instead of each trying in turn
   *   (each try of a dead Redis takes seconds of reconnection attempts).
   */
  constructor(sharedFailure: (error: unknown) => boolean = () => false) {
    this.#sharedFailure = sharedFailure;
  }

  /**
   * Runs `work` once every earlier caller of `key` has finished its own; rejects with the signal's
   * reason if `signal` aborts while waiting for the turn (`work` handles aborts once it runs).
   */
  async turn<T>(key: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    let line = this.#lines.get(key);
    if (!line) {
      line = [];
      this.#lines.set(key, line);
    }
    const me: Waiter = {};
    line.push(me);
    try {
      if (line.length > 1) await waitForTurn(me, signal);
      return await work();
    } catch (error) {
      if (this.#sharedFailure(error)) for (const waiting of line) if (waiting !== me) waiting.fail?.(error);
      throw error;
    } finally {
      const at = line.indexOf(me);
      line.splice(at, 1);
      if (at === 0) line[0]?.go?.();
      if (line.length === 0) this.#lines.delete(key);
    }
  }

  /** Callers of `key` waiting behind the head (the head excluded). */
  queued(key: string): number {
    return Math.max(0, (this.#lines.get(key)?.length ?? 0) - 1);
  }

  /** Callers waiting behind a head, over every key. */
  get totalQueued(): number {
    let total = 0;
    for (const line of this.#lines.values()) total += line.length - 1;
    return total;
  }
}

interface Waiter {
  go?: () => void;
  fail?: (error: unknown) => void;
}

function waitForTurn(me: Waiter, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => reject(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    me.go = () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    me.fail = (error) => {
      signal?.removeEventListener('abort', onAbort);
      reject(error);
    };
  });
}
