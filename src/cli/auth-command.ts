import type { Readable, Writable } from 'node:stream';
import { Command, InvalidArgumentError } from 'commander';
import { checkAccessToken } from '../api/auth/access-token-check.js';
import { importRefreshToken } from '../api/auth/import-refresh-token.js';
import { login } from '../api/auth/login.js';
import {
  type AuthComponents,
  createAuthComponents,
  credentialsPathOf,
} from '../api/auth/token-provider-factory.js';
import type { StoredCredentials } from '../api/auth/token-storage.js';
import { connectionOf, connectionView, DEFAULT_CONNECTION } from '../config/connections.js';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { createLogger, type Logger } from '../logging/logger.js';
import { type GlobalFlags, withGlobalFlags } from './cli-config.js';
import { CliError, EXIT_CANNOT_RUN } from './errors.js';

/** What the `auth` commands use from the outside world; tests replace any of it. */
export interface AuthCommandDeps {
  loadConfig: (file: string | undefined) => LoadedConfig;
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  fetch: typeof fetch;
  /** Builds the logger from the configured level and format; logs go to stderr. */
  logger: (log: Config['log']) => Logger;
  /** Shows the authorization URL: printed by default; a test (or a browser opener) may follow it. */
  showAuthorizationUrl?: (url: string) => void | Promise<void>;
}

const defaultDeps = (): AuthCommandDeps => ({
  loadConfig: (file) => loadConfig({ file }),
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  fetch: globalThis.fetch,
  logger: (log) => createLogger({ level: log.level, format: log.format, color: log.color }),
});

interface ConnectionFlags {
  baseUrl?: string;
  clientId?: string;
  /** An id of `connections:` (default: the connection of the api: and auth: keys). */
  connection?: string;
}

const seconds = (raw: string) => {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a whole number of seconds >= 1');
  return n;
};

/** `auth login | import | status`. Tokens, codes and verifiers are never printed or logged. */
export function authCommand(overrides: Partial<AuthCommandDeps> = {}): Command {
  const deps = { ...defaultDeps(), ...overrides };
  const auth = new Command('auth').description(
    'Log in to the Receivables API (OAuth 2.1 + PKCE), import a refresh token, or show what is stored.',
  );

  const setup = (command: Command, flags: ConnectionFlags) => {
    const globals = command.optsWithGlobals<GlobalFlags>();
    const whole = withGlobalFlags(deps.loadConfig(globals.config), globals);
    const connection = connectionOf(whole, flags.connection ?? DEFAULT_CONNECTION);
    // Each connection has its own credentials file; its settings stand in for api: and auth:.
    const loaded = connectionView(whole, connection);
    const log = deps.logger(loaded.config.log).child({ component: 'auth', connection: connection.id });
    const components = createAuthComponents({
      config: loaded.config,
      secrets: loaded.secrets,
      log,
      fetch: deps.fetch,
      credentialsPath: credentialsPathOf(loaded.config, connection.id),
    });
    const baseUrl = flags.baseUrl ?? loaded.config.api.baseUrl;
    const clientId = flags.clientId ?? loaded.config.auth.clientId;
    return { loaded, log, components, baseUrl, clientId, env: connection.credentialEnv };
  };
  const requireBaseUrl = (baseUrl: string | null | undefined): string => {
    if (!baseUrl)
      throw new CliError(
        'no API base URL: set RECEIVABLES_BASE_URL, api.baseUrl in the config file, or pass --base-url',
      );
    return baseUrl;
  };

  auth
    .command('login')
    .description(
      'Open the authorization page, receive the redirect on 127.0.0.1, and store the tokens (encrypted).',
    )
    .option('--connection <id>', 'the connection of `connections:` to log in to (default: the api: keys)')
    .option('--paste', 'headless server: also accept the redirected address pasted on stdin')
    .option('--base-url <url>', 'the API {base_url} (default: RECEIVABLES_BASE_URL / api.baseUrl)')
    .option('--client-id <id>', 'OAuth client id (default: RECEIVABLES_CLIENT_ID / auth.clientId)')
    .option('--scopes <list>', 'scopes to ask for, comma- or space-separated (default: the server default)')
    .option('--timeout <seconds>', 'how long to wait for the redirect', seconds, 300)
    .action(
      async (
        flags: ConnectionFlags & { paste?: boolean; scopes?: string; timeout: number },
        command: Command,
      ) => {
        const { loaded, log, components, baseUrl, clientId } = setup(command, flags);
        const say = (text: string) => deps.stderr.write(`${text}\n`);
        const credentials = await login({
          baseUrl: requireBaseUrl(baseUrl),
          clientId,
          scopes: (flags.scopes ?? '').split(/[\s,]+/).filter(Boolean),
          store: components.store,
          tokenEndpoint: components.tokenEndpoint,
          lock: components.lock,
          endpoints: {
            authorization: loaded.config.auth.authorizationEndpoint,
            token: loaded.config.auth.tokenEndpoint,
          },
          fetch: deps.fetch,
          log,
          timeoutMs: flags.timeout * 1000,
          onAuthorizationUrl: async (url) => {
            say(`Open this address in a browser and approve the access:\n\n  ${url}\n`);
            if (flags.paste) {
              say(
                'Then paste here the address the browser was sent to (http://127.0.0.1:...), and press Enter:',
              );
            }
            await deps.showAuthorizationUrl?.(url);
          },
          ...(flags.paste
            ? { pastedRedirects: deps.stdin, onPasteIgnored: (why: string) => say(`Ignored: ${why}.`) }
            : {}),
        });
        deps.stdout.write(`Logged in. ${describe(credentials, components)}\n`);
      },
    );

  auth
    .command('import')
    .description(
      'Store a refresh token obtained elsewhere: it is exchanged once (and so checked) at the token endpoint.',
    )
    .option('--connection <id>', 'the connection of `connections:` to import for (default: the api: keys)')
    .option('--refresh-token-stdin', 'read the refresh token from stdin (else RECEIVABLES_REFRESH_TOKEN)')
    .option('--base-url <url>', 'the API {base_url} (default: RECEIVABLES_BASE_URL / api.baseUrl)')
    .option(
      '--client-id <id>',
      'OAuth client id the token was issued to (default: RECEIVABLES_CLIENT_ID / auth.clientId)',
    )
    .action(async (flags: ConnectionFlags & { refreshTokenStdin?: boolean }, command: Command) => {
      const { loaded, log, components, baseUrl, clientId, env } = setup(command, flags);
      const refreshToken = flags.refreshTokenStdin
        ? await firstLine(deps.stdin)
        : loaded.secrets.refreshToken;
      if (!refreshToken) {
        throw new CliError(
          `no refresh token: pipe it with --refresh-token-stdin, or set ${env.refreshToken}`,
        );
      }
      const credentials = await importRefreshToken({
        baseUrl: requireBaseUrl(baseUrl),
        clientId,
        refreshToken,
        tokenEndpointUrl: loaded.config.auth.tokenEndpoint,
        store: components.store,
        tokenEndpoint: components.tokenEndpoint,
        lock: components.lock,
        log,
      });
      deps.stdout.write(`Imported. ${describe(credentials, components)}\n`);
    });

  auth
    .command('status')
    .description(
      'Show the stored credentials (issuer, client, scopes, expiry), never the tokens; a ready access token (RECEIVABLES_ACCESS_TOKEN) is checked with one read. Exit 0 when the token in use works (a ready one the API accepts, else stored credentials), 1 otherwise.',
    )
    .option('--connection <id>', 'the connection of `connections:` to show (default: the api: keys)')
    .option('--json', 'print one JSON object')
    .action(async (flags: { json?: boolean; connection?: string }, command: Command) => {
      const { loaded, components, env, baseUrl } = setup(command, {
        ...(flags.connection ? { connection: flags.connection } : {}),
      });
      const accessToken = loaded.secrets.accessToken;
      const stored = await components.store.load();
      // A ready access token is used before anything stored: whether it works is the answer.
      const check =
        accessToken === undefined
          ? undefined
          : baseUrl
            ? await checkAccessToken({
                baseUrl,
                accessToken,
                fetch: deps.fetch,
                timeoutMs: loaded.config.api.timeoutSeconds * 1000,
              })
            : { works: false, detail: 'not checked: no API base URL (RECEIVABLES_BASE_URL or api.baseUrl)' };
      if (flags.json)
        deps.stdout.write(
          `${JSON.stringify({ ...statusOf(stored, components, check !== undefined), ...(check ? { staticAccessTokenWorks: check.works, staticAccessTokenCheck: check.detail } : {}) })}\n`,
        );
      else if (check)
        deps.stdout.write(
          `${env.accessToken} is set: it is used as is, before anything stored; ${check.detail}.\n`,
        );
      if (stored && !flags.json) deps.stdout.write(`${describe(stored, components)}\n`);
      if (check && !check.works)
        throw new CliError(
          `the access token of ${env.accessToken} does not work: ${check.detail}; fix or unset ${env.accessToken}`,
          EXIT_CANNOT_RUN,
          { code: 'CLI_NO_WORKING_CREDENTIALS' },
        );
      if (!check && !stored)
        throw new CliError(
          `no credentials stored at ${components.store.location}: run \`receivables-sync auth login${flags.connection ? ` --connection ${flags.connection}` : ''}\``,
          EXIT_CANNOT_RUN,
          { code: 'CLI_NO_WORKING_CREDENTIALS' },
        );
    });

  return auth;
}

/** Everything about stored credentials except the secrets. */
function statusOf(c: StoredCredentials | null, components: AuthComponents, staticAccessToken: boolean) {
  return {
    stored: c !== null,
    location: components.store.location,
    staticAccessToken,
    ...(c
      ? {
          issuer: c.issuer,
          clientId: c.clientId,
          scopes: c.scopes,
          obtainedAt: new Date(c.obtainedAt).toISOString(),
          accessTokenExpiresAt:
            c.accessTokenExpiresAt === null ? null : new Date(c.accessTokenExpiresAt).toISOString(),
          refreshTokenStored: c.refreshToken !== null,
        }
      : {}),
  };
}

function describe(c: StoredCredentials, components: AuthComponents): string {
  const s = statusOf(c, components, false);
  return [
    `Issuer: ${s.issuer}`,
    `Client id: ${s.clientId}`,
    `Scopes: ${c.scopes.length > 0 ? c.scopes.join(' ') : '(none stated)'}`,
    `Access token expires: ${s.accessTokenExpiresAt ?? 'not stated by the server'}`,
    `Refresh token stored: ${c.refreshToken !== null ? 'yes' : 'no (refused by the server: log in again)'}`,
    `Stored in: ${s.location} (encrypted)`,
  ].join('\n');
}

async function firstLine(input: Readable): Promise<string | undefined> {
  let text = '';
  for await (const chunk of input) {
    text += String(chunk);
    const line = text.split(/\r?\n/).find((l) => l.trim() !== '');
    if (line !== undefined && /\r?\n/.test(text.slice(text.indexOf(line)))) return line.trim();
  }
  return text.trim() || undefined;
}
