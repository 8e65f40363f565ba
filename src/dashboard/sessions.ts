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
