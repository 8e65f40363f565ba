import type { Clock } from '../domain/clock.js';

export interface Session {
  id: string;
  user: string;
  expiresAt: number;
}

export interface SessionStoreProps {
  clock: Clock;
  /** A new unguessable id (256 bits of randomness, URL-safe). */
  newId: () => string;
  ttlMs?: number;
  /** Sessions kept at most; the oldest goes first (sign-ins are rare, this bounds memory). */
  max?: number;
}

/** Signed-in browsers, in memory: a restart signs everyone out, which is fine for an ops page. */
export class SessionStore {
  readonly ttlMs: number;
  readonly #sessions = new Map<string, Session>();

  constructor(private readonly props: SessionStoreProps) {
    this.ttlMs = props.ttlMs ?? 12 * 3600_000;
  }

  create(user: string): Session {
    const now = this.props.clock.now().getTime();
    for (const [id, session] of this.#sessions) if (session.expiresAt <= now) this.#sessions.delete(id);
    const max = this.props.max ?? 1000;
    while (this.#sessions.size >= max) this.#sessions.delete(this.#sessions.keys().next().value!);
    const session = { id: this.props.newId(), user, expiresAt: now + this.ttlMs };
    this.#sessions.set(session.id, session);
    return session;
  }

  get(id: string | undefined): Session | undefined {
    if (!id) return undefined;
    const session = this.#sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= this.props.clock.now().getTime()) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  delete(id: string): void {
    this.#sessions.delete(id);
  }
}

/**
 * Failed sign-ins per client address: after `maxFailures` within `windowMs`, further attempts are
 * refused until the window ends, so a password cannot be guessed at network speed.
 */
export class SignInThrottle {
  readonly #failures = new Map<string, { count: number; since: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly maxFailures = 10,
    private readonly windowMs = 60_000,
  ) {}

  /** Seconds to wait before trying again, or 0. */
  retryAfterSeconds(address: string): number {
    const entry = this.#current(address);
    if (!entry || entry.count < this.maxFailures) return 0;
    return Math.ceil((entry.since + this.windowMs - this.clock.now().getTime()) / 1000);
  }

  failed(address: string): void {
    const entry = this.#current(address);
    if (entry) entry.count++;
    else {
      if (this.#failures.size > 10_000) this.#failures.clear();
      this.#failures.set(address, { count: 1, since: this.clock.now().getTime() });
    }
  }

  succeeded(address: string): void {
    this.#failures.delete(address);
  }

  #current(address: string) {
    const entry = this.#failures.get(address);
    if (entry && entry.since + this.windowMs <= this.clock.now().getTime()) {
      this.#failures.delete(address);
      return undefined;
    }
    return entry;
  }
}
