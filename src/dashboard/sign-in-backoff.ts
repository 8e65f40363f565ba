import type { Clock } from '../domain/clock.js';

export interface SignInBackoffProps {
  clock: Clock;
  /** Failed attempts a key may make before it is slowed down. */
  freeFailures?: number;
  /** The first delay after the free failures; each further failure doubles it. */
  baseDelayMs?: number;
  /** No delay grows beyond this: it is also the longest the right password ever waits. */
  maxDelayMs?: number;
  /** A key with no failure for this long starts afresh. */
  forgetAfterMs?: number;
  /** Keys kept at most (addresses and user names are chosen by the client: this bounds memory). */
  maxKeys?: number;
}

/** One sign-in attempt let in: wait `waitMs`, check the password, then `end` it with the outcome. */
export interface AdmittedAttempt {
  refused: false;
  waitMs: number;
  end(succeeded: boolean): void;
}

/** An attempt turned away before its password is checked: too many already wait their turn. */
export interface RefusedAttempt {
  refused: true;
  retryAfterSeconds: number;
}

interface Entry {
  failures: number;
  /** Attempts let in whose outcome is not known yet (they count as failures in the meantime). */
  pending: number;
  /** When this address's next attempt may be checked. */
  nextAt: number;
  lastFailureAt: number;
}

/**
 * Slows password guessing down without ever locking the right password out.
 *
 * Per client address: after `freeFailures`, each attempt waits its turn, exponentially later
 * (250 ms, 500 ms, 1 s, then `maxDelayMs`); attempts whose turn is further than `maxDelayMs` away
 * are refused (429) before their password is checked, so a flood from one address gets one guess
 * per `maxDelayMs`, however many connections it opens. Attempts let in count as failures until
 * they end, so a burst of parallel guesses queues up like a sequence.
 *
 * Per user name: the same delay, but never a refusal or a queue: guesses spread over many
 * addresses are each slowed down, and the real user, from any other address, is let in after at
 * most `maxDelayMs`. (A queue per user would let one address lock everyone out again.)
 *
 * A success forgets its address's failures; a user name's failures fade after `forgetAfterMs`
 * without another one (the real user signing in does not reset a guesser's count).
 */
export class SignInBackoff {
  readonly #addresses = new Map<string, Entry>();
  readonly #users = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #free: number;
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #forgetMs: number;
  readonly #maxKeys: number;

  constructor(props: SignInBackoffProps) {
    this.#clock = props.clock;
    this.#free = props.freeFailures ?? 5;
    this.#baseMs = props.baseDelayMs ?? 250;
    this.#maxMs = props.maxDelayMs ?? 2000;
    this.#forgetMs = props.forgetAfterMs ?? 15 * 60_000;
    this.#maxKeys = props.maxKeys ?? 10_000;
  }

  /** The longest an attempt is held before its password is checked. */
  get maxDelayMs(): number {
    return this.#maxMs;
  }

  /** Addresses and user names currently remembered (bounded by `maxKeys` each). */
  get size(): number {
    return this.#addresses.size + this.#users.size;
  }

  /** Called before the password is checked; an admitted attempt must be `end`ed exactly once. */
  begin(address: string, user: string): AdmittedAttempt | RefusedAttempt {
    const now = this.#clock.now().getTime();
    const byAddress = this.#entry(this.#addresses, address, now);
    const byUser = this.#entry(this.#users, user.slice(0, 200), now);
    const turn = Math.max(now, byAddress.nextAt);
    if (turn - now > this.#maxMs) {
      return { refused: true, retryAfterSeconds: Math.max(1, Math.ceil((turn - now - this.#maxMs) / 1000)) };
    }
    byAddress.pending++;
    byAddress.nextAt = turn + this.#delay(byAddress.failures + byAddress.pending);
    const waitMs = Math.max(turn - now, this.#delay(byUser.failures));
    let ended = false;
    return {
      refused: false,
      waitMs,
      end: (succeeded) => {
        if (ended) return;
        ended = true;
        byAddress.pending = Math.max(0, byAddress.pending - 1);
        if (succeeded) {
          this.#addresses.delete(address);
          return;
        }
        const at = this.#clock.now().getTime();
        for (const entry of [byAddress, byUser]) {
          entry.failures++;
          entry.lastFailureAt = at;
        }
      },
    };
  }

  /** No delay for the first `freeFailures`, then base, 2 × base, 4 × base, ... up to the maximum. */
  #delay(failures: number): number {
    if (failures < this.#free) return 0;
    return Math.min(this.#maxMs, this.#baseMs * 2 ** (failures - this.#free));
  }

  #entry(map: Map<string, Entry>, key: string, now: number): Entry {
    const known = map.get(key);
    if (known) {
      const idle = known.pending === 0 && known.nextAt <= now && known.lastFailureAt + this.#forgetMs <= now;
      if (!idle) return known;
      map.delete(key);
    }
    if (map.size >= this.#maxKeys) this.#evict(map, now);
    const entry: Entry = { failures: 0, pending: 0, nextAt: now, lastFailureAt: now };
    map.set(key, entry);
    return entry;
  }

  /** Forgotten keys first; if none, the oldest (a flood of invented keys must not grow memory). */
  #evict(map: Map<string, Entry>, now: number): void {
    for (const [key, entry] of map)
      if (entry.pending === 0 && entry.lastFailureAt + this.#forgetMs <= now) map.delete(key);
    while (map.size >= this.#maxKeys) map.delete(map.keys().next().value!);
  }
}
