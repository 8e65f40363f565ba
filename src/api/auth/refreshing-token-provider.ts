import { type Clock, systemClock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { LoginRequiredError } from '../errors.js';
import { CredentialStoreError, TokenEndpointError } from './auth-errors.js';
import type { HeldLock, RefreshLock } from './refresh-lock.js';
import { budgetKeyOf } from './static-token-provider.js';
import type { TokenEndpointClient } from './token-endpoint.js';
import type { CredentialStore, StoredCredentials } from './token-storage.js';
import type { TokenProvider } from './types.js';

/** Where a refresh token comes from when nothing is stored yet: `RECEIVABLES_REFRESH_TOKEN`. */
export interface RefreshTokenBootstrap {
  refreshToken: string;
  /** Issuer, token endpoint and client id for it (discovery + config), resolved only when needed. */
  describe(): Promise<{ issuer: string; tokenEndpoint: string; clientId: string }>;
}

export interface RefreshingTokenProviderProps {
  store: CredentialStore;
  /** Shared by every process using `store`; see refresh-lock.ts. */
  lock: RefreshLock;
  /** The refresh grant (a `TokenEndpointClient`; tests give a fake). */
  tokenEndpoint: Pick<TokenEndpointClient, 'refresh'>;
  clock?: Clock;
  log?: Logger;
  /** Refresh once less than this share of the token's lifetime is left. Default 0.2. */
  refreshAheadRatio?: number;
  /** ...but never more than this ahead of expiry. Default 60 s. */
  maxRefreshAheadMs?: number;
  bootstrap?: RefreshTokenBootstrap;
  /**
   * What to say when nothing is stored and there is no refresh token to start from (default: log
   * in); a connection of `connections:` names its variables and `--connection`.
   */
  missing?: { reason: string; fix: string } | undefined;
  /** The variable the bootstrap refresh token came from (default RECEIVABLES_REFRESH_TOKEN), for logs. */
  bootstrapEnv?: string | undefined;
  /**
   * Told after each grant at the token endpoint (a write there: the refresh token is spent and
   * its successor stored), e.g. for `doctor` to say that it rotated one.
   */
  onRefreshed?: ((refresh: RefreshEvent) => void) | undefined;
}

/** A refresh grant that happened. */
export interface RefreshEvent {
  reason: Reason;
  /** The server gave a new refresh token (the old one is spent). */
  rotated: boolean;
  /** Where the new credentials were stored. */
  location: string;
}

type Reason = 'expiring' | 'rejected' | 'bootstrap';

/** How often a rotated refresh token whose save failed is saved again. */
const UNSAVED_RETRY_MS = 5_000;

/**
 * Access tokens from stored credentials, refreshed ahead of expiry.
 *
 * - Single flight in the process (one promise) and across processes (`lock`): the holder re-reads
 *   the store first, so a process that finds the tokens already rotated by another uses them and
 *   never calls the token endpoint; one call per expiry, whatever the number of clients.
 * - No refresh token is spent unless its successor can be stored: the store proves it can take a
 *   record (key usable, folder writable) before each grant. The rotated refresh token is saved
 *   before the new access token is handed out: a crash can lose a grant, but never leaves a spent
 *   refresh token in the store for another process to reuse.
 * - The stored credentials win over the bootstrap refresh token: once a rotation is stored, the
 *   environment's (spent) token is never presented again.
 * - `invalid_grant` clears the stored refresh token and throws `LoginRequiredError` once; later
 *   calls (in any process) fail at once without calling the token endpoint again, until a new login.
 *
 * @example
 * const provider = new RefreshingTokenProvider({ store, lock, tokenEndpoint, log });
 * const token = await provider.getAccessToken();
 */
export class RefreshingTokenProvider implements TokenProvider {
  readonly #store: CredentialStore;
  readonly #lock: RefreshLock;
  readonly #endpoint: Pick<TokenEndpointClient, 'refresh'>;
  readonly #clock: Clock;
  readonly #log: Logger | undefined;
  readonly #ratio: number;
  readonly #maxAheadMs: number;
  readonly #bootstrap: RefreshTokenBootstrap | undefined;
  readonly #missing: RefreshingTokenProviderProps['missing'];
  readonly #bootstrapEnv: string;
  readonly #onRefreshed: RefreshingTokenProviderProps['onRefreshed'];
  #cached: StoredCredentials | null = null;
  #inflight: Promise<StoredCredentials> | undefined;
  /**
   * Rotated credentials whose save failed after the grant (the disk filled between the store's
   * check and the save): the only live copy of the refresh token, used and saved again until stored.
   */
  #unsaved: StoredCredentials | undefined;
  #unsavedRetryAt = 0;
  /** The token produced by the last refresh that a 401 forced: a 401 on it too is not retried. */
  #forcedToken: string | undefined;

  constructor(props: RefreshingTokenProviderProps) {
    this.#store = props.store;
    this.#lock = props.lock;
    this.#endpoint = props.tokenEndpoint;
    this.#clock = props.clock ?? systemClock;
    this.#log = props.log;
    this.#ratio = props.refreshAheadRatio ?? 0.2;
    this.#maxAheadMs = props.maxRefreshAheadMs ?? 60_000;
    this.#bootstrap = props.bootstrap;
    this.#missing = props.missing;
    this.#bootstrapEnv = props.bootstrapEnv ?? 'RECEIVABLES_REFRESH_TOKEN';
    this.#onRefreshed = props.onRefreshed;
  }

  async getAccessToken(): Promise<string> {
    if (this.#unsaved) await this.#saveUnsaved();
    const current = await this.#current();
    if (current === null) return (await this.#refresh(null, 'bootstrap')).accessToken;
    if (!this.needsRefresh(current)) return current.accessToken;
    return (await this.#refresh(current.accessToken, 'expiring')).accessToken;
  }

  async invalidate(token: string): Promise<string> {
    if (this.#forcedToken !== undefined && token === this.#forcedToken) {
      throw new LoginRequiredError('The API refused a freshly refreshed access token');
    }
    let next = await this.#refresh(token, 'rejected');
    // We may have joined a flight started for another reason, which kept `token`: refresh for ours.
    if (next.accessToken === token) next = await this.#refresh(token, 'rejected');
    if (next.accessToken === token) throw new LoginRequiredError('The API refused the stored access token');
    return next.accessToken;
  }

  budgetKey(token: string): string {
    return budgetKeyOf(token);
  }

  /** Whether `c`'s access token is within its refresh-ahead margin (or past expiry). */
  needsRefresh(c: StoredCredentials): boolean {
    if (c.accessTokenExpiresAt === null) return false;
    const lifetime = Math.max(0, c.accessTokenExpiresAt - c.obtainedAt);
    const ahead = Math.min(this.#maxAheadMs, lifetime * this.#ratio);
    return this.#clock.now().getTime() >= c.accessTokenExpiresAt - ahead;
  }

  /** The cached record; the store is read again when nothing usable is cached (a new login may exist). */
  async #current(): Promise<StoredCredentials | null> {
    if (this.#cached && this.#cached.refreshToken !== null) return this.#cached;
    const loaded = await this.#store.load();
    if (loaded) this.#cached = loaded;
    if (loaded && loaded.refreshToken === null && this.needsRefresh(loaded)) {
      throw new LoginRequiredError('The stored refresh token was refused by the authorization server');
    }
    return loaded;
  }

  #refresh(staleToken: string | null, reason: Reason): Promise<StoredCredentials> {
    if (this.#inflight) return this.#inflight;
    // When there is a refresh token to spend, and before the lock, whose file sits beside the
    // credentials: a folder that takes no file is reported as such, and no grant is made.
    const spendable = this.#cached !== null || this.#bootstrap !== undefined;
    const flight = (spendable ? this.#checkStore() : Promise.resolve())
      .then(() => this.#lock.withLock((held) => this.#refreshHolding(held, staleToken, reason)))
      .finally(() => {
        this.#inflight = undefined;
      });
    this.#inflight = flight;
    return flight;
  }

  async #refreshHolding(
    held: HeldLock,
    staleToken: string | null,
    reason: Reason,
  ): Promise<StoredCredentials> {
    // Under the lock, the store is the truth (another process may have rotated the tokens
    // meanwhile), unless it holds a token this process spent and could not replace.
    let current = this.#unsaved ?? (await this.#store.load());
    if (current !== null && current.accessToken !== staleToken && !this.needsRefresh(current)) {
      this.#cached = current;
      this.#log?.debug({ reason }, 'access token already refreshed by another client');
      return current;
    }
    if (current === null) current = await this.#bootstrapCredentials();
    if (current.refreshToken === null) {
      this.#cached = current;
      throw new LoginRequiredError('The stored refresh token was refused by the authorization server');
    }
    if (!(await held.stillHeld())) {
      throw new TokenEndpointError('the token refresh lock was lost before the refresh; try again');
    }
    let next: StoredCredentials;
    try {
      next = await this.#endpoint.refresh(current);
    } catch (error) {
      if (error instanceof LoginRequiredError) await this.#forget(current);
      throw error;
    }
    this.#cached = next;
    try {
      await this.#store.save(next);
      this.#unsaved = undefined;
    } catch (error) {
      this.#unsaved = next;
      this.#unsavedRetryAt = this.#clock.now().getTime() + UNSAVED_RETRY_MS;
      this.#log?.error(
        { err: (error as Error).message, location: this.#store.location },
        'the rotated refresh token could not be stored: this process keeps it and saves it again; free the space (or fix the folder) before it stops, or log in again after',
      );
    }
    this.#forcedToken = reason === 'rejected' ? next.accessToken : undefined;
    const expiresInSeconds =
      next.accessTokenExpiresAt === null
        ? null
        : Math.round((next.accessTokenExpiresAt - next.obtainedAt) / 1000);
    this.#log?.info(
      { reason, expiresInSeconds, rotated: next.refreshToken !== current.refreshToken },
      'access token refreshed',
    );
    this.#onRefreshed?.({
      reason,
      rotated: next.refreshToken !== current.refreshToken,
      location: this.#store.location,
    });
    return next;
  }

  async #saveUnsaved(): Promise<void> {
    const unsaved = this.#unsaved;
    if (!unsaved || this.#clock.now().getTime() < this.#unsavedRetryAt) return;
    try {
      await this.#store.save(unsaved);
      if (this.#unsaved === unsaved) this.#unsaved = undefined;
      this.#log?.info({ location: this.#store.location }, 'the rotated refresh token is stored now');
    } catch {
      this.#unsavedRetryAt = this.#clock.now().getTime() + UNSAVED_RETRY_MS;
    }
  }

  /** Refuses to spend `current`'s refresh token when its successor could not be stored. */
  async #checkStore(): Promise<void> {
    try {
      await this.#store.checkWritable();
    } catch (error) {
      if (!(error instanceof CredentialStoreError)) throw error;
      const whose =
        this.#cached === null && this.#bootstrap
          ? `the refresh token of ${this.#bootstrapEnv}`
          : 'the stored refresh token';
      throw new CredentialStoreError(
        `${error.message} (${whose} was not used: the server rotates it, and a rotated token that cannot be stored would be lost; it still works once the credentials can be stored)`,
        { cause: error },
      );
    }
  }

  async #bootstrapCredentials(): Promise<StoredCredentials> {
    if (!this.#bootstrap) {
      const missing = this.#missing;
      throw missing
        ? new LoginRequiredError(missing.reason, missing.fix)
        : new LoginRequiredError('No credentials are stored');
    }
    const where = await this.#bootstrap.describe();
    this.#log?.info(
      { issuer: where.issuer, clientId: where.clientId },
      `using the refresh token from ${this.#bootstrapEnv}`,
    );
    return {
      ...where,
      accessToken: '-',
      accessTokenExpiresAt: 0,
      refreshToken: this.#bootstrap.refreshToken,
      scopes: [],
      obtainedAt: 0,
    };
  }

  /** After `invalid_grant`: keep the record (for `auth status`) without its dead refresh token. */
  async #forget(current: StoredCredentials): Promise<void> {
    const dead = {
      ...current,
      refreshToken: null,
      accessTokenExpiresAt: Math.min(current.accessTokenExpiresAt ?? 0, this.#clock.now().getTime()),
    };
    this.#cached = dead;
    await this.#store.save(dead).catch((error: unknown) => {
      this.#log?.warn({ err: (error as Error).message }, 'could not record the refused refresh token');
    });
  }
}
