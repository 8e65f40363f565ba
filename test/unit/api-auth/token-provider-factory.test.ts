import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RefreshingTokenProvider } from '../../../src/api/auth/refreshing-token-provider.js';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { createTokenProvider, credentialsPathOf } from '../../../src/api/auth/token-provider-factory.js';
import { LoginRequiredError } from '../../../src/api/errors.js';
import { createLogger } from '../../../src/logging/logger.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rs-factory-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const setup = (secrets: { accessToken?: string; refreshToken?: string }) => ({
  config: { api: { baseUrl: null }, auth: { clientId: 'receivables-sync' }, state: { dataDir } },
  secrets: {
    accessToken: undefined,
    refreshToken: undefined,
    tokenKey: undefined as string | undefined,
    ...secrets,
  },
  log: createLogger({ level: 'silent' }),
});

describe('createTokenProvider', () => {
  it('when RECEIVABLES_ACCESS_TOKEN is set, then that token is used as is and a 401 means log in again', async () => {
    const provider = createTokenProvider(setup({ accessToken: 'static-token' }));
    expect(provider).toBeInstanceOf(StaticTokenProvider);
    expect(await provider.getAccessToken()).toBe('static-token');
    await expect(provider.invalidate('static-token')).rejects.toThrow(LoginRequiredError);
  });

  it('when nothing is configured, then the stored credentials are used, and none gives LoginRequiredError', async () => {
    const provider = createTokenProvider(setup({}));
    expect(provider).toBeInstanceOf(RefreshingTokenProvider);
    await expect(provider.getAccessToken()).rejects.toThrow(/auth login/);
  });

  it('when only RECEIVABLES_REFRESH_TOKEN is set without a base URL, then the error says what is missing', async () => {
    const keyed = setup({ refreshToken: 'rt' });
    keyed.secrets.tokenKey = 'a passphrase for this test';
    await expect(createTokenProvider(keyed).getAccessToken()).rejects.toThrow(/RECEIVABLES_BASE_URL/);
  });

  it('when asked where credentials live, then it is credentials.enc in the data folder', () => {
    expect(credentialsPathOf({ state: { dataDir } })).toBe(join(dataDir, 'credentials.enc'));
  });
});
