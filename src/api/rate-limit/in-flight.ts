/**
 * This process's admissions of one key that no response has been observed for yet, oldest first:
 * `observe` restamps the oldest one to the response time (see docs/rate-limiting.md, "Which entry
 * is restamped"). Admissions older than the log keeps are dropped first, so the one returned still
 * has its entry; the list is also bounded (`limit` per key).
 */
export class InFlight<T> {
  readonly #byKey = new Map<string, { admission: T; at: number }[]>();
  readonly #limit: number;

  constructor(limit = 10_000) {
    this.#limit = limit;
  }

  /** Records an admission of `key` made at `at` (ms, this process's clock). */
  add(key: string, admission: T, at: number): void {
    let list = this.#byKey.get(key);
    if (!list) {
      list = [];
      this.#byKey.set(key, list);
    }
    list.push({ admission, at });
    if (list.length > this.#limit) list.shift();
  }

  /** Removes and returns the oldest admission of `key` made after `notBefore` (older ones are dropped). */
  oldest(key: string, notBefore: number): T | undefined {
    const list = this.#byKey.get(key);
    if (!list) return undefined;
    let next = list.shift();
    while (next && next.at < notBefore) next = list.shift();
    if (list.length === 0) this.#byKey.delete(key);
    return next?.admission;
  }
}
