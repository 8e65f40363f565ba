import { FinishTags, type Flow } from './flow.js';
import { UNKNOWN_POLICY_POLL_MS } from './policy.js';
import type { Sleep } from './types.js';

/** What the in-memory line needs from its limiter. */
export interface FairLineProps {
  /**
   * One budget check of `key` for the waiter at the head of its line: `waitMs` 0 when it may go (the
   * admission is logged by the check), else the ms until a request could; `known` false while the
   * policy is not known or the slow start waits for an answer (then the line re-checks every 50 ms).
   */
  check: (key: string) => { waitMs: number; known: boolean };
  sleep: Sleep;
  now: () => number;
  /** Counts a sleep as a wait in the limiter's stats (`WaitBoard.during`). */
  during: <T>(wakesAt: number, sleep: Promise<T>) => Promise<T>;
  /** Aborted when the limiter closes: every waiter is rejected with `closedError()`. */
  closing: AbortSignal;
  closedError: () => Error;
}

interface Waiter {
  tag: number;
  /** Arrival order, for equal tags. */
  seq: number;
  admit: () => void;
  fail: (error: unknown) => void;
}

interface KeyLine {
  /** By (tag, seq): the head is the next admitted. */
  waiting: Waiter[];
  tags: FinishTags;
  pumping: boolean;
  /** Set while the line sleeps; aborted to end the sleep when the last waiter leaves. */
  idle: AbortController | undefined;
}

/**
 * The `acquire` calls of one process waiting for one key, admitted by weighted fair queuing between
 * flows (virtual finish tags, `FinishTags`). One loop per key checks the budget for the waiter with
 * the smallest tag and sleeps on one timer until the time the check names: a freed slot costs one
 * check, however many wait, and a newcomer with a smaller tag is the next admitted even if others
 * were sleeping before it came.
 *
 * @example
 * const line = new FairLine({ check: (key) => tryTake(key), sleep, now, during, closing, closedError });
 * await line.turn(budgetKey, { id: 'erp-csv', weight: 1 }, signal);
 */
export class FairLine {
  readonly #props: FairLineProps;
  readonly #lines = new Map<string, KeyLine>();
  #seq = 0;

  constructor(props: FairLineProps) {
    this.#props = props;
  }

  /** Resolves once a request of `flow` is admitted under `key`; rejects on abort or close. */
  turn(key: string, flow: Flow, signal?: AbortSignal): Promise<void> {
    if (this.#props.closing.aborted) return Promise.reject(this.#props.closedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    let line = this.#lines.get(key);
    if (!line) {
      line = { waiting: [], tags: new FinishTags(), pumping: false, idle: undefined };
      this.#lines.set(key, line);
    }
    const joined = line;
    const admission = new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const at = joined.waiting.indexOf(me);
        if (at >= 0) joined.waiting.splice(at, 1);
        if (joined.waiting.length === 0) joined.idle?.abort();
        reject(signal!.reason);
      };
      const me: Waiter = {
        tag: joined.tags.issue(flow),
        seq: this.#seq++,
        admit: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      joined.waiting.splice(insertionPoint(joined.waiting, me), 0, me);
    });
    if (!line.pumping) void this.#pump(key, line);
    return admission;
  }

  /** Callers waiting without a timer of their own (the line's one sleeping timer is counted by its `during`). */
  get queued(): number {
    let total = 0;
    for (const line of this.#lines.values()) total += Math.max(0, line.waiting.length - (line.idle ? 1 : 0));
    return total;
  }

  async #pump(key: string, line: KeyLine): Promise<void> {
    line.pumping = true;
    try {
      while (line.waiting.length > 0) {
        if (this.#props.closing.aborted) {
          for (const waiter of line.waiting.splice(0)) waiter.fail(this.#props.closedError());
          return;
        }
        let check: { waitMs: number; known: boolean };
        try {
          check = this.#props.check(key);
        } catch (error) {
          for (const waiter of line.waiting.splice(0)) waiter.fail(error);
          return;
        }
        if (check.waitMs <= 0) {
          const next = line.waiting.shift()!;
          line.tags.admitted(next.tag);
          next.admit();
          continue;
        }
        const sleepMs = check.known ? check.waitMs : Math.min(check.waitMs, UNKNOWN_POLICY_POLL_MS);
        line.idle = new AbortController();
        const wake = AbortSignal.any([this.#props.closing, line.idle.signal]);
        try {
          await this.#props.during(this.#props.now() + sleepMs, this.#props.sleep(sleepMs, wake));
        } catch {
          // Woken early: the last waiter left, or the limiter closed (handled at the top).
        } finally {
          line.idle = undefined;
        }
      }
    } finally {
      line.pumping = false;
      // Nobody waits: the next busy period of this key starts with fresh tags.
      if (line.waiting.length === 0 && this.#lines.get(key) === line) this.#lines.delete(key);
    }
  }
}

/** Index at which `waiter` keeps `waiting` sorted by (tag, seq). */
function insertionPoint(waiting: Waiter[], waiter: Waiter): number {
  let lo = 0;
  let hi = waiting.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const other = waiting[mid]!;
    if (other.tag < waiter.tag || (other.tag === waiter.tag && other.seq < waiter.seq)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
