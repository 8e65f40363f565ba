/**
 * Documents that came before their account in one run of a tap, waiting for it: the engine syncs a
 * batch's accounts first, so a document handed out right after its account is never refused for an
 * account that arrives a few lines later. Bounded: past `bound` documents, the account that has
 * waited longest lets its documents go on (they fail if it never comes, and are retried).
 */
export class HeldDocuments<T extends { seq: number }> {
  readonly #seen = new Set<string>();
  /** By the account's key, each list in the order the documents came. */
  readonly #held = new Map<string, T[]>();
  #count = 0;
  #most = 0;

  constructor(readonly bound: number) {}

  /** The most documents held at once so far. */
  get mostHeld(): number {
    return this.#most;
  }

  /** Whether this account came in this run (its documents go on at once). */
  hasSeen(account: string): boolean {
    return this.#seen.has(account);
  }

  /** An account came: the documents that waited for it, to go right after it. */
  accountCame(account: string): T[] {
    this.#seen.add(account);
    return this.#take(account) ?? [];
  }

  /** Holds a document till its account comes; returns the documents the bound lets go (oldest first). */
  hold(account: string, item: T): T[] {
    const list = this.#held.get(account);
    if (list) list.push(item);
    else this.#held.set(account, [item]);
    this.#count++;
    this.#most = Math.max(this.#most, this.#count);
    if (this.#count <= this.bound) return [];
    let oldest: string | null = null;
    let oldestSeq = Number.POSITIVE_INFINITY;
    for (const [key, items] of this.#held) {
      if (items[0]!.seq < oldestSeq) {
        oldest = key;
        oldestSeq = items[0]!.seq;
      }
    }
    return oldest === null ? [] : (this.#take(oldest) ?? []);
  }

  /** The input ended: every document still held, in the order they came. */
  releaseAll(): T[] {
    const all = [...this.#held.values()].flat().sort((a, b) => a.seq - b.seq);
    this.#held.clear();
    this.#count = 0;
    return all;
  }

  /** The lowest sequence number held (Infinity when none is). */
  lowestSeq(): number {
    let low = Number.POSITIVE_INFINITY;
    for (const items of this.#held.values()) low = Math.min(low, items[0]!.seq);
    return low;
  }

  #take(account: string): T[] | undefined {
    const items = this.#held.get(account);
    if (items === undefined) return undefined;
    this.#held.delete(account);
    this.#count -= items.length;
    return items;
  }
}
