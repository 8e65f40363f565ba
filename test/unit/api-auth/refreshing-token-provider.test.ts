import { describe, expect, it } from 'vitest';
import { CredentialStoreError, TokenEndpointError } from '../../../src/api/auth/auth-errors.js';
import { LocalRefreshLock } from '../../../src/api/auth/refresh-lock.js';
import { RefreshingTokenProvider } from '../../../src/api/auth/refreshing-token-provider.js';
import { MemoryCredentialStore, type StoredCredentials } from '../../../src/api/auth/token-storage.js';
import { LoginRequiredError } from '../../../src/api/errors.js';
import { ManualClock } from '../../../src/domain/clock.js';

const TTL_MS = 100_000;

/** A token endpoint that rotates like the sandbox: each refresh token is good once. */
class FakeTokenEndpoint {
  calls = 0;
  events: string[] = [];
  #n = 0;
  #live = new Set<string>();
  refuse = false;
  constructor(
    private readonly clock: ManualClock,
    initialRefreshToken: string,
  ) {
    this.#live.add(initialRefreshToken);
  }
  async refresh(current: StoredCredentials): Promise<StoredCredentials> {
    this.calls++;
    await Promise.resolve();
    if (this.refuse || !current.refreshToken || !this.#live.delete(current.refreshToken)) {
      throw new LoginRequiredError(
        'The authorization server refused the stored refresh token (invalid_grant)',
      );
    }
    this.#n++;
    const refreshToken = `rt${this.#n}`;
    this.#live.add(refreshToken);
    const now = this.clock.now().getTime();
    this.events.push(`issued at${this.#n}`);
    return {
      ...current,
      accessToken: `at${this.#n}`,
      refreshToken,
      accessTokenExpiresAt: now + TTL_MS,
      obtainedAt: now,
    };
  }
}

class RecordingStore extends MemoryCredentialStore {
  constructor(
    initial: StoredCredentials | null,
    private readonly events: string[],
  ) {
    super(initial);
  }
  override async save(c: StoredCredentials): Promise<void> {
    this.events.push(`saved ${c.accessToken}`);
    await super.save(c);
  }
}

function setup(options: { expiresInMs?: number | null } = {}) {
  const clock = new ManualClock();
  const now = clock.now().getTime();
  const initial: StoredCredentials = {
    issuer: 'https://as.test',
    tokenEndpoint: 'https://as.test/token',
    clientId: 'receivables-sync',
    accessToken: 'at0',
    accessTokenExpiresAt: options.expiresInMs === null ? null : now + (options.expiresInMs ?? TTL_MS),
    refreshToken: 'rt0',
    scopes: ['accounts:all'],
    obtainedAt: now,
  };
  const endpoint = new FakeTokenEndpoint(clock, 'rt0');
  const store = new RecordingStore(initial, endpoint.events);
  const lock = new LocalRefreshLock();
  const provider = () => new RefreshingTokenProvider({ store, lock, tokenEndpoint: endpoint, clock });
  return { clock, endpoint, store, lock, provider };
}

describe('RefreshingTokenProvider', () => {
  it('when the token has more than 20% of its life left, then it is returned without a refresh', async () => {
    const { clock, endpoint, provider } = setup();
    clock.advance(TTL_MS * 0.79);
    expect(await provider().getAccessToken()).toBe('at0');
    expect(endpoint.calls).toBe(0);
  });

  it('when the token is within its refresh-ahead margin, then it is refreshed and the rotated tokens are saved before use', async () => {
    const { clock, endpoint, store, provider } = setup();
    clock.advance(TTL_MS * 0.81);
    expect(await provider().getAccessToken()).toBe('at1');
    expect(endpoint.events).toEqual(['issued at1', 'saved at1']);
    expect((await store.load())?.refreshToken).toBe('rt1');
  });

  it('when the lifetime is long, then the margin is capped at 60 s', async () => {
    const { clock, endpoint, provider } = setup({ expiresInMs: 3_600_000 });
    clock.advance(3_600_000 - 61_000);
    await provider().getAccessToken();
    expect(endpoint.calls).toBe(0);
    clock.advance(2_000);
    await provider().getAccessToken();
    expect(endpoint.calls).toBe(1);
  });

  it('when the server stated no expiry, then the token is used until a 401', async () => {
    const { clock, endpoint, provider } = setup({ expiresInMs: null });
    clock.advance(10 * TTL_MS);
    const p = provider();
    expect(await p.getAccessToken()).toBe('at0');
    expect(await p.invalidate('at0')).toBe('at1');
    expect(endpoint.calls).toBe(1);
  });

  it('when 20 calls of one provider need a refresh at once, then the token endpoint is called once', async () => {
    const { clock, endpoint, provider } = setup();
    clock.advance(TTL_MS);
    const p = provider();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => p.getAccessToken()));
    expect(new Set(tokens)).toEqual(new Set(['at1']));
    expect(endpoint.calls).toBe(1);
  });

  it('when 8 providers with their own caches share a store and a lock, then one refresh serves them all', async () => {
    const { clock, endpoint, provider } = setup();
    const providers = Array.from({ length: 8 }, provider);
    await Promise.all(providers.map((p) => p.getAccessToken()));
    clock.advance(TTL_MS);
    const tokens = await Promise.all(providers.map((p) => p.getAccessToken()));
    expect(new Set(tokens)).toEqual(new Set(['at1']));
    expect(endpoint.calls).toBe(1);
  });

  it('when the server answers invalid_grant, then LoginRequiredError is thrown once and never retried, in any provider', async () => {
    const { clock, endpoint, store, provider } = setup();
    const a = provider();
    const b = provider();
    await b.getAccessToken();
    endpoint.refuse = true;
    clock.advance(TTL_MS);
    await expect(a.getAccessToken()).rejects.toThrow(LoginRequiredError);
    await expect(a.getAccessToken()).rejects.toThrow(/auth login/);
    await expect(b.getAccessToken()).rejects.toThrow(LoginRequiredError);
    await expect(b.invalidate('at0')).rejects.toThrow(LoginRequiredError);
    expect(endpoint.calls).toBe(1);
    expect((await store.load())?.refreshToken).toBeNull();
  });

  it('when a new login is stored after invalid_grant, then the provider picks it up', async () => {
    const { clock, endpoint, store, provider } = setup();
    const p = provider();
    endpoint.refuse = true;
    clock.advance(TTL_MS);
    await expect(p.getAccessToken()).rejects.toThrow(LoginRequiredError);
    const now = clock.now().getTime();
    await store.save({
      ...(await store.load())!,
      accessToken: 'fresh',
      refreshToken: 'rtX',
      accessTokenExpiresAt: now + TTL_MS,
      obtainedAt: now,
    });
    expect(await p.getAccessToken()).toBe('fresh');
  });

  it('when a 401 names the current token, then one refresh happens and the new token is returned', async () => {
    const { endpoint, provider } = setup();
    const p = provider();
    expect(await p.invalidate(await p.getAccessToken())).toBe('at1');
    expect(endpoint.calls).toBe(1);
  });

  it('when a 401 names a token another provider already replaced, then the stored token is returned without a call', async () => {
    const { endpoint, provider } = setup();
    const a = provider();
    const b = provider();
    await a.invalidate('at0');
    expect(await b.invalidate('at0')).toBe('at1');
    expect(endpoint.calls).toBe(1);
  });

  it('when the API refuses the token a 401 just produced, then LoginRequiredError ends it (no loop)', async () => {
    const { endpoint, provider } = setup();
    const p = provider();
    const fresh = await p.invalidate('at0');
    await expect(p.invalidate(fresh)).rejects.toThrow(/freshly refreshed/);
    expect(endpoint.calls).toBe(1);
  });

  it('when the store could not keep a rotated token, then no refresh token is spent and the error says why', async () => {
    const { clock, endpoint, provider, store } = setup();
    store.checkWritable = async () => {
      throw new CredentialStoreError('RECEIVABLES_TOKEN_KEY is not set');
    };
    clock.advance(TTL_MS);
    const error = await provider()
      .getAccessToken()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CredentialStoreError);
    expect((error as Error).message).toMatch(
      /RECEIVABLES_TOKEN_KEY is not set .*stored refresh token was not used/,
    );
    expect(endpoint.calls).toBe(0);
    expect((await store.load())?.refreshToken).toBe('rt0');
  });

  it('when the save fails after the grant, then the rotated token is kept in memory, used for the next refresh, and saved once the store heals', async () => {
    const { clock, endpoint, provider, store } = setup();
    const save = store.save.bind(store);
    let full = true;
    store.save = async (c) => {
      if (full) throw new Error('ENOSPC: no space left on device');
      await save(c);
    };
    const p = provider();
    clock.advance(TTL_MS);
    expect(await p.getAccessToken()).toBe('at1');
    expect((await store.load())?.refreshToken).toBe('rt0');
    // Still full at the next expiry: the refresh presents rt1 (in memory), not the spent rt0.
    clock.advance(TTL_MS);
    expect(await p.getAccessToken()).toBe('at2');
    expect(endpoint.calls).toBe(2);
    full = false;
    clock.advance(10_000);
    expect(await p.getAccessToken()).toBe('at2');
    expect((await store.load())?.refreshToken).toBe('rt2');
    expect(endpoint.calls).toBe(2);
  });

  it('when a grant happens, then onRefreshed is told whether the refresh token rotated and where it is stored', async () => {
    const { clock, endpoint, store } = setup();
    const events: unknown[] = [];
    const p = new RefreshingTokenProvider({
      store,
      lock: new LocalRefreshLock(),
      tokenEndpoint: endpoint,
      clock,
      onRefreshed: (event) => events.push(event),
    });
    expect(await p.getAccessToken()).toBe('at0');
    expect(events).toEqual([]);
    clock.advance(TTL_MS);
    await p.getAccessToken();
    expect(events).toEqual([{ reason: 'expiring', rotated: true, location: 'memory' }]);
  });

  it('when nothing is stored and no bootstrap is given, then LoginRequiredError', async () => {
    const p = new RefreshingTokenProvider({
      store: new MemoryCredentialStore(),
      lock: new LocalRefreshLock(),
      tokenEndpoint: { refresh: async () => Promise.reject(new Error('not called')) },
    });
    await expect(p.getAccessToken()).rejects.toThrow(/No credentials are stored/);
  });

  it('when nothing is stored and RECEIVABLES_REFRESH_TOKEN is given, then it is exchanged once and persisted', async () => {
    const clock = new ManualClock();
    const endpoint = new FakeTokenEndpoint(clock, 'rt-env');
    const store = new MemoryCredentialStore();
    const make = () =>
      new RefreshingTokenProvider({
        store,
        lock: new LocalRefreshLock(),
        tokenEndpoint: endpoint,
        clock,
        bootstrap: {
          refreshToken: 'rt-env',
          describe: async () => ({
            issuer: 'https://as.test',
            tokenEndpoint: 'https://as.test/token',
            clientId: 'c',
          }),
        },
      });
    expect(await make().getAccessToken()).toBe('at1');
    expect(await make().getAccessToken()).toBe('at1');
    expect(endpoint.calls).toBe(1);
    expect((await store.load())?.refreshToken).toBe('rt1');
  });

  it('when the lock is lost before the grant, then no refresh token is spent', async () => {
    const { clock, endpoint, store } = setup();
    const p = new RefreshingTokenProvider({
      store,
      lock: { withLock: (fn) => fn({ stillHeld: async () => false }) },
      tokenEndpoint: endpoint,
      clock,
    });
    clock.advance(TTL_MS);
    await expect(p.getAccessToken()).rejects.toThrow(TokenEndpointError);
    expect(endpoint.calls).toBe(0);
  });

  it('when asked for a budget key, then it is a short hash, not the token', () => {
    const key = setup().provider().budgetKey('at_secret');
    expect(key).toMatch(/^at:[0-9a-f]{16}$/);
    expect(key).not.toContain('secret');
  });
});
