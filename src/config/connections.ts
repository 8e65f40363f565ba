import { AppError } from '../domain/errors.js';
import type { LoadedConfig } from './load.js';
import type { Config, ConnectionEntry, Secrets, SourceConfig } from './schema.js';

/** The connection of the `api:` and `auth:` keys and of RECEIVABLES_* credentials. */
export const DEFAULT_CONNECTION = 'default';

/**
 * One API connection as the rest of the code sees it: the `api:` and `auth:` settings and the
 * credentials it syncs with. The default connection is today's keys; each entry of `connections:`
 * takes what it leaves out from them and its secrets from the environment variables it names.
 */
export interface ApiConnection {
  id: string;
  api: Config['api'];
  auth: Config['auth'];
  secrets: Pick<Secrets, 'accessToken' | 'refreshToken' | 'tokenKey'>;
  /** The environment variables its credentials come from (for messages; never their values). */
  credentialEnv: { accessToken: string; refreshToken: string };
}

/** What the token provider needs to name a connection's credentials in its errors (none for the default). */
export const credentialNamesOf = (connection: ApiConnection) =>
  connection.id === DEFAULT_CONNECTION
    ? undefined
    : {
        id: connection.id,
        accessTokenEnv: connection.credentialEnv.accessToken,
        refreshTokenEnv: connection.credentialEnv.refreshToken,
      };

/** The connection a source syncs through (`connection:`, else the default one). */
export const connectionIdOf = (source: Pick<SourceConfig, 'connection'>): string =>
  source.connection ?? DEFAULT_CONNECTION;

/** Every connection of a configuration, the default one first (it exists even when unconfigured). */
export function apiConnections(loaded: LoadedConfig): Map<string, ApiConnection> {
  const { config, secrets, env } = loaded;
  const connections = new Map<string, ApiConnection>();
  connections.set(DEFAULT_CONNECTION, {
    id: DEFAULT_CONNECTION,
    api: config.api,
    auth: config.auth,
    secrets: {
      accessToken: secrets.accessToken,
      refreshToken: secrets.refreshToken,
      tokenKey: secrets.tokenKey,
    },
    credentialEnv: { accessToken: 'RECEIVABLES_ACCESS_TOKEN', refreshToken: 'RECEIVABLES_REFRESH_TOKEN' },
  });
  for (const entry of config.connections) connections.set(entry.id, fromEntry(entry, config, secrets, env));
  return connections;
}

function fromEntry(
  entry: ConnectionEntry,
  config: Config,
  secrets: Secrets,
  env: LoadedConfig['env'],
): ApiConnection {
  const read = (name: string | undefined) => (name ? env[name]?.trim() || undefined : undefined);
  return {
    id: entry.id,
    api: {
      baseUrl: entry.baseUrl,
      organizationId: entry.organizationId ?? null,
      timeoutSeconds: entry.timeoutSeconds ?? config.api.timeoutSeconds,
      retryAttempts: entry.retryAttempts ?? config.api.retryAttempts,
      concurrency: entry.concurrency ?? config.api.concurrency,
      compat: entry.compat ?? config.api.compat,
    },
    auth: {
      clientId: read(entry.clientIdEnv) ?? entry.auth?.clientId ?? config.auth.clientId,
      ...(entry.auth?.tokenEndpoint ? { tokenEndpoint: entry.auth.tokenEndpoint } : {}),
      ...(entry.auth?.authorizationEndpoint
        ? { authorizationEndpoint: entry.auth.authorizationEndpoint }
        : {}),
    },
    secrets: {
      accessToken: read(entry.accessTokenEnv),
      refreshToken: read(entry.refreshTokenEnv),
      tokenKey: secrets.tokenKey,
    },
    credentialEnv: {
      accessToken: entry.accessTokenEnv ?? `a variable named by connections.${entry.id}.accessTokenEnv`,
      refreshToken: entry.refreshTokenEnv ?? `a variable named by connections.${entry.id}.refreshTokenEnv`,
    },
  };
}

/** The connection `id`, or a configuration error naming the known ones. */
export function connectionOf(loaded: LoadedConfig, id: string): ApiConnection {
  const all = apiConnections(loaded);
  const found = all.get(id);
  if (found) return found;
  throw new AppError('CONNECTION_UNKNOWN', `no connection "${id}" (known: ${[...all.keys()].join(', ')})`);
}

/**
 * The configuration as one connection sees it: its `api:`, `auth:` and credentials in place of the
 * default ones, so what was written for one API (doctor's checks, the token provider) serves each.
 */
export function connectionView(loaded: LoadedConfig, connection: ApiConnection): LoadedConfig {
  return {
    ...loaded,
    config: { ...loaded.config, api: connection.api, auth: connection.auth },
    secrets: { ...loaded.secrets, ...connection.secrets },
  };
}

/** The connections the given sources sync through, in the order they first appear. */
export function connectionsUsedBy(
  loaded: LoadedConfig,
  sources: readonly Pick<SourceConfig, 'connection'>[],
): ApiConnection[] {
  const ids = [...new Set(sources.map(connectionIdOf))];
  return ids.map((id) => connectionOf(loaded, id));
}
