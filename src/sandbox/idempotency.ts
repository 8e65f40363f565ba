import { createHash } from 'node:crypto';

export const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface Entry {
  state: 'running' | 'stored';
  fingerprint: string;
  status?: number;
  payload?: string;
  contentType?: string;
  expiresAt: number;
}

export type Lookup =
  | { kind: 'new' }
  | { kind: 'running' }
  | { kind: 'mismatch' }
  | { kind: 'replay'; status: number; payload: string; contentType: string | undefined };

/**
 * Idempotency keys scoped to OAuth client, HTTP method and path. A key is `running` while its
 * write executes, `stored` for the retention time after a 2xx, and released after a 4xx/5xx.
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  /** When false the store is "unreachable": writes with a key answer 503 and run nothing. */
  available = true;

  constructor(private readonly retentionMs: number) {}

  static scope(clientId: string, method: string, path: string, key: string): string {
    return JSON.stringify([clientId, method, path, key]);
  }

  begin(scope: string, fingerprint: string, nowMs: number): Lookup {
    const found = this.#entries.get(scope);
    if (found && found.state === 'stored' && found.expiresAt <= nowMs) this.#entries.delete(scope);
    const entry = this.#entries.get(scope);
    if (!entry) {
      this.#entries.set(scope, { state: 'running', fingerprint, expiresAt: Number.POSITIVE_INFINITY });
      return { kind: 'new' };
    }
    if (entry.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (entry.state === 'running') return { kind: 'running' };
    return { kind: 'replay', status: entry.status!, payload: entry.payload!, contentType: entry.contentType };
  }

  finish(
    scope: string,
    status: number,
    payload: string,
    contentType: string | undefined,
    nowMs: number,
  ): void {
    const entry = this.#entries.get(scope);
    if (entry?.state !== 'running') return;
    if (status >= 400) {
      this.#entries.delete(scope);
      return;
    }
    Object.assign(entry, {
      state: 'stored',
      status,
      payload,
      contentType,
      expiresAt: nowMs + this.retentionMs,
    });
  }

  /** Whether `scope` is `running`, `stored`, or free (`undefined`); read only, for tests. */
  stateOf(scope: string): Entry['state'] | undefined {
    return this.#entries.get(scope)?.state;
  }

  /** Releases a running key whose request ended without a response (an aborted request). */
  release(scope: string): void {
    if (this.#entries.get(scope)?.state === 'running') this.#entries.delete(scope);
  }
}

/**
 * The fingerprint of a request body: the same fields and file bytes give the same fingerprint,
 * whatever the JSON key order or the multipart boundary.
 */
export function bodyFingerprint(body: unknown): string {
  return createHash('sha256').update(canonical(body)).digest('hex');
}

function canonical(value: unknown): string {
  if (Buffer.isBuffer(value)) return `bytes:${createHash('sha256').update(value).digest('hex')}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    const record = value as Record<string, unknown>;
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
