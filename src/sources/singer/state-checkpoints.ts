/** A STATE message's value, as the tap wrote it. */
export interface TapState {
  value: unknown;
}

/**
 * The STATE messages of one tap run, and when each is reached: once every record read before it
 * was handed out in a batch and that batch was processed (synced, or its failures in the state DB).
 * Records are numbered in the order they were read (`seq`); a batch is known by its lowest record.
 * Only a reached STATE may be echoed (the target) or stored as the cursor: a tap resumed from it
 * skips nothing that was not synced.
 */
export class StateCheckpoints {
  /** STATEs not reached yet, oldest first: the first record read after each, and its value. */
  readonly #pending: Array<{ before: number; value: unknown }> = [];
  /** The lowest record of each batch handed out and not processed yet, oldest first. */
  readonly #outstanding: number[] = [];
  /** The lowest record in the batch being filled, or null when it holds none. */
  #filling: number | null = null;
  #last: TapState | null = null;
  #reached: TapState | null = null;

  /** The last STATE the tap wrote, reached or not. */
  get last(): TapState | null {
    return this.#last;
  }

  /** The last STATE reached. */
  get reached(): TapState | null {
    return this.#reached;
  }

  /** A STATE came after `read` records were read (the next record's seq). */
  noted(value: unknown, read: number): void {
    this.#last = { value };
    this.#pending.push({ before: read, value });
  }

  /** A record went into the batch being filled. */
  filled(seq: number): void {
    this.#filling ??= seq;
  }

  /** The batch being filled was handed out; `read`: the next record's seq (for a batch of none). */
  handedOut(read: number): void {
    this.#outstanding.push(this.#filling ?? read);
    this.#filling = null;
  }

  /**
   * The oldest batch handed out was processed. `unsent`: the lowest record not in any batch yet
   * (held back, or not read: the next record's seq). Returns the last STATE this reaches, if any.
   */
  processed(unsent: number): TapState | null {
    this.#outstanding.shift();
    let frontier = Math.min(this.#outstanding[0] ?? unsent, unsent);
    if (this.#filling !== null) frontier = Math.min(frontier, this.#filling);
    return this.#reach(frontier);
  }

  /** Every record was processed: every STATE is reached. Returns the last one this reaches, if any. */
  processedAll(): TapState | null {
    return this.#reach(Number.POSITIVE_INFINITY);
  }

  #reach(frontier: number): TapState | null {
    let reached: TapState | null = null;
    while (this.#pending.length > 0 && this.#pending[0]!.before <= frontier)
      reached = { value: this.#pending.shift()!.value };
    if (reached !== null) this.#reached = reached;
    return reached;
  }
}
