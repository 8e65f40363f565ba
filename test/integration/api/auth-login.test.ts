import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { Command } from 'commander';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LoginFlowError } from '../../../src/api/auth/auth-errors.js';
import { importRefreshToken } from '../../../src/api/auth/import-refresh-token.js';
import { login } from '../../../src/api/auth/login.js';
import { createAuthComponents } from '../../../src/api/auth/token-provider-factory.js';
import { LoginRequiredError } from '../../../src/api/errors.js';
import { authCommand } from '../../../src/cli/auth-command.js';
import { loadConfig } from '../../../src/config/load.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { approveInBrowser, captureLogs, leaked, recordingFetch, TOKEN_KEY, tempDir } from './auth-support.js';

let sandbox: TestSandbox;
let dir: { dir: string; remove: () => Promise<void> };

beforeAll(async () => {
  // Every test here calls the token endpoint from 127.0.0.1; auth-refresh.test.ts keeps the default 10 / 60 s.
  sandbox = await startTestSandbox({ tokenRateLimit: { quota: 1000, windowSeconds: 60 } });
});
afterAll(async () => {
  await sandbox.close();
});
beforeEach(async () => {
  dir = await tempDir();
  return () => dir.remove();
});

function components(log = captureLogs().log, fetchImpl: typeof fetch = fetch) {
  const config = {
    api: { baseUrl: sandbox.baseUrl },
    auth: { clientId: sandbox.clientId },
    state: { dataDir: dir.dir },
  };
  const secrets = { accessToken: undefined, refreshToken: undefined, tokenKey: TOKEN_KEY };
  return createAuthComponents({ config, secrets, log, fetch: fetchImpl });
}

const organizations = (token: string) => sandbox.call('GET', '/organizations', { token });

describe('auth login', () => {
  it('when the user approves in the browser, then the tokens are stored encrypted, call the API, and no secret is logged', async () => {
    const logs = captureLogs();
    const wire = recordingFetch();
    const c = components(logs.log, wire.fetch);
    let code = '';
    const credentials = await login({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      scopes: ['accounts:all', 'organizations:read'],
      ...c,
      fetch: wire.fetch,
      log: logs.log,
      onAuthorizationUrl: async (url) => {
        const parsed = new URL(url);
        expect(parsed.searchParams.get('code_challenge_method')).toBe('S256');
        expect(parsed.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
        expect(parsed.searchParams.get('state')).toMatch(/.{20,}/);
        const approved = await approveInBrowser(url);
        expect(approved.landingStatus).toBe(200);
        code = approved.code;
      },
    });
    expect(credentials.scopes).toEqual(['accounts:all', 'organizations:read']);
    expect(credentials.issuer).toBe(sandbox.baseUrl);
    const stored = await c.store.load();
    expect(stored).toEqual(credentials);
    expect((await organizations(stored!.accessToken)).status).toBe(200);
    expect(wire.tokenCalls.map((t) => t.grantType)).toEqual(['authorization_code']);
    wire.secrets.add(code);
    expect(wire.secrets.size).toBe(4); // code, verifier, access token, refresh token
    expect(leaked(logs.text(), wire.secrets)).toEqual([]);
    // The login is logged once, with where and what it was granted (and none of the secrets).
    const granted = logs.entries().filter((e) => e.level === 30 && Array.isArray(e.scopes));
    expect(granted).toEqual([
      expect.objectContaining({
        issuer: sandbox.baseUrl,
        clientId: sandbox.clientId,
        scopes: ['accounts:all', 'organizations:read'],
      }),
    ]);
  });

  it('when --paste is used on a headless server, then the pasted redirect address completes the login', async () => {
    const paste = new PassThrough();
    const ignored: string[] = [];
    const c = components();
    const credentials = await login({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      ...c,
      pastedRedirects: paste,
      onPasteIgnored: (why) => ignored.push(why),
      onAuthorizationUrl: async (url) => {
        const { location } = await approveInBrowser(url, { follow: false });
        paste.write('not a url\n');
        paste.write(`${location.replace(/state=[^&]+/, 'state=forged')}\n`);
        paste.write(`${location}\n`);
      },
    });
    expect((await organizations(credentials.accessToken)).status).toBe(200);
    expect(ignored).toHaveLength(2);
  });

  it('when a redirect with another state reaches the loopback, then it gets 400 and the login goes on', async () => {
    const c = components();
    const credentials = await login({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      ...c,
      onAuthorizationUrl: async (url) => {
        const { location } = await approveInBrowser(url, { follow: false });
        const forged = await fetch(location.replace(/state=[^&]+/, 'state=forged'));
        expect(forged.status).toBe(400);
        expect((await fetch(location)).status).toBe(200);
      },
    });
    expect(credentials.refreshToken).toMatch(/.+/);
  });

  it('when no redirect comes in time, then LoginFlowError and nothing is stored', async () => {
    const c = components();
    const attempt = login({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      ...c,
      timeoutMs: 200,
      onAuthorizationUrl: () => {},
    });
    await expect(attempt).rejects.toThrow(LoginFlowError);
    expect(await c.store.load()).toBeNull();
  });

  it('when the authorization server refuses (unknown scope), then the error names the OAuth error', async () => {
    const c = components();
    const attempt = login({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      scopes: ['everything'],
      ...c,
      onAuthorizationUrl: async (url) => {
        await approveInBrowser(url).catch(() => {});
      },
    });
    await expect(attempt).rejects.toThrow(/invalid_scope/);
  });

  describe('when the API points to protected resource metadata of another resource', () => {
    let impostor: Server;
    let impostorUrl: string;
    beforeAll(async () => {
      // It answers 401 like the API, but names the sandbox's metadata, whose `resource` is not this server.
      impostor = createServer((_request, response) => {
        response
          .writeHead(401, {
            'www-authenticate': `Bearer resource_metadata="${sandbox.baseUrl}/.well-known/oauth-protected-resource"`,
          })
          .end();
      });
      await new Promise<void>((resolve) => impostor.listen(0, '127.0.0.1', resolve));
      impostorUrl = `http://127.0.0.1:${(impostor.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((resolve) => impostor.close(() => resolve())));

    it('then the login is refused before any authorization URL is shown', async () => {
      let shown = false;
      const attempt = login({
        baseUrl: impostorUrl,
        clientId: sandbox.clientId,
        ...components(),
        onAuthorizationUrl: () => {
          shown = true;
        },
      });
      await expect(attempt).rejects.toThrow(/another resource/);
      expect(shown).toBe(false);
    });
  });
});

describe('auth import', () => {
  it('when a refresh token from elsewhere is imported, then it is exchanged once and the rotated tokens are stored', async () => {
    const issued = await sandbox.admin('POST', '/tokens', { withRefreshToken: true });
    const wire = recordingFetch();
    const logs = captureLogs();
    const c = components(logs.log, wire.fetch);
    const credentials = await importRefreshToken({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      refreshToken: `${issued.refreshToken}\n`,
      ...c,
      log: logs.log,
    });
    expect(credentials.refreshToken).not.toBe(issued.refreshToken);
    expect(await c.store.load()).toEqual(credentials);
    expect((await organizations(credentials.accessToken)).status).toBe(200);
    expect(wire.tokenCalls.map((t) => t.grantType)).toEqual(['refresh_token']);
    expect(leaked(logs.text(), [...wire.secrets, issued.accessToken])).toEqual([]);
  });

  it('when the refresh token is unknown, then LoginRequiredError and nothing is stored', async () => {
    const c = components();
    const attempt = importRefreshToken({
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      refreshToken: 'sbx_rt_nope',
      ...c,
    });
    await expect(attempt).rejects.toThrow(LoginRequiredError);
    expect(await c.store.load()).toBeNull();
  });
});

describe('the auth command', () => {
  function cli(stdin = new PassThrough(), where: { cwd?: string; env?: Record<string, string> } = {}) {
    let out = '';
    let err = '';
    const logs = captureLogs();
    const env = { RECEIVABLES_BASE_URL: sandbox.baseUrl, RECEIVABLES_TOKEN_KEY: TOKEN_KEY, ...where.env };
    const program = new Command('receivables-sync')
      .option('-c, --config <file>')
      .exitOverride()
      .addCommand(
        authCommand({
          loadConfig: () => {
            const loaded = loadConfig({ env, cwd: where.cwd ?? dir.dir });
            return { ...loaded, secrets: { ...loaded.secrets, tokenKey: TOKEN_KEY } };
          },
          stdin,
          stdout: new Writable({
            write: (c, _e, done) => {
              out += String(c);
              done();
            },
          }),
          stderr: new Writable({
            write: (c, _e, done) => {
              err += String(c);
              done();
            },
          }),
          logger: () => logs.log,
          showAuthorizationUrl: async (url) => {
            await approveInBrowser(url);
          },
        }),
      );
    const run = (...args: string[]) => program.parseAsync(['auth', ...args], { from: 'user' });
    return { run, out: () => out, err: () => err, logs };
  }

  it('when nothing is stored, then `auth status` fails with exit code 1', async () => {
    await expect(cli().run('status')).rejects.toMatchObject({
      exitCode: 1,
      message: /no credentials stored/,
    });
  });

  it('when `auth login` ran, then `auth status` shows issuer, client, scopes and expiry, and no secret', async () => {
    const login = cli();
    await login.run('login', '--scopes', 'accounts:read,profile');
    expect(login.err()).toContain('/api/oauth/authorize?');
    expect(login.out()).toContain('Logged in.');
    const status = cli();
    await status.run('status');
    expect(status.out()).toContain(`Issuer: ${sandbox.baseUrl}`);
    expect(status.out()).toContain('Scopes: accounts:read profile');
    expect(status.out()).toContain('Refresh token stored: yes');
    expect(status.out()).toContain(join(dir.dir, 'data', 'credentials.enc'));
    const json = cli();
    await json.run('status', '--json');
    const parsed = JSON.parse(json.out());
    expect(parsed).toMatchObject({ stored: true, clientId: sandbox.clientId, refreshTokenStored: true });
    expect(Object.keys(parsed)).not.toContain('refreshToken');
    expect(Object.keys(parsed)).not.toContain('accessToken');
  });

  it('when a refresh token is piped to `auth import --refresh-token-stdin`, then it is stored', async () => {
    const issued = await sandbox.admin('POST', '/tokens', { withRefreshToken: true });
    const stdin = new PassThrough();
    stdin.end(`${issued.refreshToken}\n`);
    const run = cli(stdin);
    await run.run('import', '--refresh-token-stdin');
    expect(run.out()).toContain('Imported.');
    expect(run.out() + run.err() + run.logs.text()).not.toContain(issued.refreshToken);
  });

  it('when `auth import` has no token at all, then it says where to put one', async () => {
    await expect(cli().run('import')).rejects.toThrow(/--refresh-token-stdin/);
  });

  it('when a connection of `connections:` imports its refresh token, then it is stored in its own file and shown by `auth status --connection`, not as the default connection', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'rs-auth-connection-'));
    writeFileSync(
      join(cwd, 'receivables-sync.yaml'),
      `connections:\n  - { id: client-acme, baseUrl: ${sandbox.baseUrl}, refreshTokenEnv: ACME_REFRESH_TOKEN }\n`,
    );
    const issued = await sandbox.admin('POST', '/tokens', { withRefreshToken: true });
    const where = { cwd, env: { ACME_REFRESH_TOKEN: issued.refreshToken } };
    const imported = cli(new PassThrough(), where);
    await imported.run('import', '--connection', 'client-acme');
    expect(imported.out()).toContain('Imported.');
    const status = cli(new PassThrough(), where);
    await status.run('status', '--connection', 'client-acme');
    expect(status.out()).toContain(join(cwd, 'data', 'credentials.client-acme.enc'));
    await expect(cli(new PassThrough(), where).run('status')).rejects.toMatchObject({
      exitCode: 1,
      message: /no credentials stored at .*credentials\.enc/,
    });
    await expect(cli(new PassThrough(), where).run('status', '--connection', 'nope')).rejects.toThrow(
      /no connection "nope" \(known: default, client-acme\)/,
    );
    rmSync(cwd, { recursive: true, force: true });
  });
});
