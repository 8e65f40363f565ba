import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import type { Config, Secrets } from '../../config/schema.js';
import { type Clock, systemClock } from '../../domain/clock.js';
import type { Logger } from '../../logging/logger.js';
import { LoginRequiredError } from '../errors.js';
import type { MeteredRateLimiter } from '../rate-limit/types.js';
import { refreshEndpointOf } from './discovery.js';
import { EncryptedFileStore } from './encrypted-file-store.js';
import { FileRefreshLock } from './file-refresh-lock.js';
import { RedisRefreshLock } from './redis-refresh-lock.js';
import { CompositeRefreshLock, type RefreshLock } from './refresh-lock.js';
import { RefreshingTokenProvider, type RefreshingTokenProviderProps } from './refreshing-token-provider.js';
import { StaticTokenProvider } from './static-token-provider.js';
import { TokenEndpointClient } from './token-endpoint.js';
import { createTokenEndpointLimiter } from './token-endpoint-limiter.js';
import type { CredentialStore } from './token-storage.js';
import type { TokenProvider } from './types.js';

export interface AuthSetup {
  config: {
    api: Pick<Config['api'], 'baseUrl'>;
    auth: Config['auth'];
    state: Pick<Config['state'], 'dataDir'>;
  };
  secrets: Pick<Secrets, 'accessToken' | 'refreshToken' | 'tokenKey'>;
  log: Logger;
  fetch?: typeof fetch;
  clock?: Clock;
  /**
   * When given, the token-endpoint budget is shared by every process through Redis, and refreshes
   * also take a Redis lock (after the file lock). Without it, `sync --once` still refreshes safely:
   * the file lock covers every process sharing the credentials file.
   */
  redis?: Redis;
  /** Prefix of every Redis key, as for the API limiter. Default `receivables-sync`. */
  redisPrefix?: string;
  /** Default `${state.dataDir}/credentials.enc`. */
  credentialsPath?: string;
  /**
   * A connection of `connections:` (default: the `api:` keys'): its id and the variables its
   * credentials come from, so errors name them and `--connection`.
   */
  connection?: { id: string; accessTokenEnv: string; refreshTokenEnv: string } | undefined;
  /** Told after each refresh grant (see `RefreshingTokenProviderProps.onRefreshed`). */
  onRefreshed?: RefreshingTokenProviderProps['onRefreshed'];
}

/** The pieces of auth, for the CLI's `auth` commands and for the token provider. */
export interface AuthComponents {
  store: CredentialStore;
  lock: RefreshLock;
  limiter: MeteredRateLimiter;
  tokenEndpoint: TokenEndpointClient;
}

/**
 * Where a connection's credentials are stored: `credentials.enc` for the default connection (as
 * before connections existed), `credentials.<id>.enc` for each other one.
 */
export const credentialsPathOf = (config: { state: { dataDir: string } }, connectionId = 'default') =>
  join(
    config.state.dataDir,
    connectionId === 'default' ? 'credentials.enc' : `credentials.${connectionId}.enc`,
  );

export function createAuthComponents(setup: AuthSetup): AuthComponents {
  const path = resolve(setup.credentialsPath ?? credentialsPathOf(setup.config));
  const prefix = setup.redisPrefix ?? 'receivables-sync';
  const clock = setup.clock ?? systemClock;
  const store = new EncryptedFileStore({ path, tokenKey: setup.secrets.tokenKey, log: setup.log });
  const fileLock = new FileRefreshLock({ path: `${path}.lock` });
  const lock = setup.redis
    ? new CompositeRefreshLock([
        fileLock,
        new RedisRefreshLock({ redis: setup.redis, key: `${prefix}:auth:refresh-lock:${hashOf(path)}` }),
      ])
    : fileLock;
  const limiter = createTokenEndpointLimiter({
    redis: setup.redis,
    prefix: setup.redisPrefix,
    clock,
    logger: setup.log,
  });
  const tokenEndpoint = new TokenEndpointClient({
    limiter,
    clock,
    log: setup.log,
    ...(setup.fetch ? { fetch: setup.fetch } : {}),
  });
  return { store, lock, limiter, tokenEndpoint };
}

/**
 * The token provider of the API client: `RECEIVABLES_ACCESS_TOKEN` when set (no refresh), else the
 * stored credentials of `auth login` / `auth import`, else `RECEIVABLES_REFRESH_TOKEN` exchanged on
 * first use and persisted (rotated tokens go to the store, the env value is never sent again).
 */
export function createTokenProvider(setup: AuthSetup): TokenProvider {
  const named = setup.connection;
  if (setup.secrets.accessToken)
    return new StaticTokenProvider({
      accessToken: setup.secrets.accessToken,
      envName: named?.accessTokenEnv,
    });
  const log = setup.log.child({ component: 'auth' });
  const { store, lock, tokenEndpoint } = createAuthComponents({ ...setup, log });
  const refreshToken = setup.secrets.refreshToken;
  const baseUrl = setup.config.api.baseUrl;
  return new RefreshingTokenProvider({
    store,
    lock,
    tokenEndpoint,
    log,
    onRefreshed: setup.onRefreshed,
    ...(named
      ? {
          bootstrapEnv: named.refreshTokenEnv,
          missing: {
            reason: `No credentials are stored for connection "${named.id}", and neither ${named.accessTokenEnv} nor ${named.refreshTokenEnv} is set`,
            fix: `Set one of them, or run \`receivables-sync auth login --connection ${named.id}\` (or \`auth import --connection ${named.id}\`).`,
          },
        }
      : {}),
    ...(setup.clock ? { clock: setup.clock } : {}),
    ...(refreshToken
      ? {
          bootstrap: {
            refreshToken,
            // The refresh grant needs no discovery: the spec names the token endpoint.
            describe: async () => {
              if (!baseUrl)
                throw new LoginRequiredError('RECEIVABLES_REFRESH_TOKEN needs RECEIVABLES_BASE_URL');
              return {
                ...refreshEndpointOf(baseUrl, setup.config.auth.tokenEndpoint),
                clientId: setup.config.auth.clientId,
              };
            },
          },
        }
      : {}),
  });
}

const hashOf = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);
