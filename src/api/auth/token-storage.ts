/**
 * What a login leaves behind, and the port that keeps it. Adapters: the encrypted file
 * (`encrypted-file-store.ts`) now; a state-DB table later. Keep the port small.
 */
export interface StoredCredentials {
  /** Authorization server issuer (RFC 8414 `issuer`). */
  issuer: string;
  tokenEndpoint: string;
  clientId: string;
  accessToken: string;
  /** Epoch ms; null when the server gave no `expires_in` (then only a 401 triggers a refresh). */
  accessTokenExpiresAt: number | null;
  /** Null once the server refused it (`invalid_grant`): a new login is needed. */
  refreshToken: string | null;
  scopes: string[];
  /** Epoch ms of the grant that produced `accessToken`. */
  obtainedAt: number;
}

/** Where credentials live. `load` returns null when nothing was stored yet. */
export interface CredentialStore {
  load(): Promise<StoredCredentials | null>;
  /** Replaces what is stored, atomically: a reader sees the old or the new record, never a mix. */
  save(credentials: StoredCredentials): Promise<void>;
  /**
   * Proves that a `save` would succeed now (the key is usable, the place takes a new record), and
   * throws `CredentialStoreError` with the fix when it would not. Called before every grant that
   * spends a refresh token or an authorization code: a rotated token that cannot be stored is lost,
   * and presenting its spent predecessor again revokes the whole family (RFC 9700 §4.14.2).
   */
  checkWritable(): Promise<void>;
  /** Where it is (a path, a table), for `auth status` and error messages. */
  readonly location: string;
}

/** An in-memory store, for tests and for `auth status --json` fakes. */
export class MemoryCredentialStore implements CredentialStore {
  readonly location = 'memory';
  #value: StoredCredentials | null;
  constructor(initial: StoredCredentials | null = null) {
    this.#value = initial === null ? null : structuredClone(initial);
  }
  async load(): Promise<StoredCredentials | null> {
    return this.#value === null ? null : structuredClone(this.#value);
  }
  async save(credentials: StoredCredentials): Promise<void> {
    this.#value = structuredClone(credentials);
  }
  async checkWritable(): Promise<void> {}
}

/** Checks the shape of a decrypted record (files written by an older version, or by hand). */
export function parseStoredCredentials(value: unknown): StoredCredentials | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const str = (k: string) => typeof v[k] === 'string' && (v[k] as string).length > 0;
  const numOrNull = (k: string) => v[k] === null || typeof v[k] === 'number';
  if (!str('issuer') || !str('tokenEndpoint') || !str('clientId') || !str('accessToken')) return null;
  if (!numOrNull('accessTokenExpiresAt') || typeof v.obtainedAt !== 'number') return null;
  if (!(v.refreshToken === null || str('refreshToken'))) return null;
  if (!Array.isArray(v.scopes) || !v.scopes.every((s) => typeof s === 'string')) return null;
  return {
    issuer: v.issuer as string,
    tokenEndpoint: v.tokenEndpoint as string,
    clientId: v.clientId as string,
    accessToken: v.accessToken as string,
    accessTokenExpiresAt: v.accessTokenExpiresAt as number | null,
    refreshToken: v.refreshToken as string | null,
    scopes: v.scopes as string[],
    obtainedAt: v.obtainedAt as number,
  };
}
