import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type SyncEnv, syncEnv } from '../support/sync-env.js';

/** `auth` through the built CLI, against a sandbox: what a wrong client id says, what `auth status` answers. */
describe('auth from the command line', () => {
  let sandbox: TestSandbox;
  const envs: SyncEnv[] = [];
  const KEY = 'a passphrase for the stored tokens of this test';

  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(async () => {
    for (const env of envs) await env.cleanup();
    await sandbox?.close();
  });

  /** A configuration with nothing stored and no access token. */
  const freshEnv = () => {
    const env = syncEnv(sandbox, 'embedded');
    env.env.RECEIVABLES_ACCESS_TOKEN = '';
    env.env.RECEIVABLES_TOKEN_KEY = KEY;
    envs.push(env);
    return env;
  };
  const refreshTokenOf = async () =>
    (await sandbox.admin('POST', '/tokens', { withRefreshToken: true })).refreshToken as string;
  const cli = (env: SyncEnv, args: string[], over: NodeJS.ProcessEnv = {}) =>
    runCli(['--config', env.configFile, ...args], { env: { ...env.env, ...over } });

  describe('an OAuth client id the server does not know (invalid_client)', () => {
    it('when `auth import` uses it, then the error names --client-id and RECEIVABLES_CLIENT_ID, not a new login, and the token is not spent', async () => {
      const env = freshEnv();
      const refreshToken = await refreshTokenOf();
      const refused = await cli(env, ['auth', 'import'], {
        RECEIVABLES_REFRESH_TOKEN: refreshToken,
        RECEIVABLES_CLIENT_ID: 'not-a-registered-client',
      });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'The authorization server does not know the OAuth client id "not-a-registered-client" (invalid_client',
      );
      expect(refused.stderr).toContain('pass --client-id to `auth login` / `auth import`');
      expect(refused.stderr).toContain('or set RECEIVABLES_CLIENT_ID');
      expect(refused.stderr).not.toMatch(/auth login` \(or `auth import`\) again/);
      // The grant was refused before anything was spent: the same token works with the right client id.
      const imported = await cli(env, ['auth', 'import'], {
        RECEIVABLES_REFRESH_TOKEN: refreshToken,
        RECEIVABLES_CLIENT_ID: sandbox.clientId,
      });
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^Imported\./);
    });

    it('when sync --once exchanges a refresh token under it, then the one line of why names RECEIVABLES_CLIENT_ID, and the files stay', async () => {
      const env = freshEnv();
      dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
      const result = await cli(env, ['sync', '--once'], {
        RECEIVABLES_REFRESH_TOKEN: await refreshTokenOf(),
        RECEIVABLES_CLIENT_ID: 'not-a-registered-client',
      });
      expect(result.code).toBe(1);
      const line = result.stderr.split('\n').find((l) => l.startsWith('receivables-sync: '));
      expect(line).toMatch(/does not know the OAuth client id "not-a-registered-client"/);
      expect(line).toMatch(/RECEIVABLES_CLIENT_ID/);
      expect(line).toMatch(/AUTH_CLIENT_UNKNOWN/);
      expect(readdirSync(env.dropDir)).toContain('accounts.csv');
    });
  });

  describe('auth status', () => {
    it('when a working access token is configured (nothing stored), then it says the API accepts it and exits 0', async () => {
      const env = freshEnv();
      const over = { RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken };
      const text = await cli(env, ['auth', 'status'], over);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toBe(
        `RECEIVABLES_ACCESS_TOKEN is set: it is used as is, before anything stored; the API at ${sandbox.baseUrl} accepts it.\n`,
      );
      expect(text.stdout).not.toContain(sandbox.accessToken);
      const json = await cli(env, ['auth', 'status', '--json'], over);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({
        stored: false,
        staticAccessToken: true,
        staticAccessTokenWorks: true,
      });
    });

    it('when the configured access token is refused, or nothing is configured, then it exits 1 saying why', async () => {
      const env = freshEnv();
      const refused = await cli(env, ['auth', 'status'], { RECEIVABLES_ACCESS_TOKEN: 'refused-token' });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `the access token of RECEIVABLES_ACCESS_TOKEN does not work: the API at ${sandbox.baseUrl} refused it (401)`,
      );
      const nothing = await cli(env, ['auth', 'status']);
      expect(nothing.code).toBe(1);
      expect(nothing.stderr).toContain('no credentials stored at');
    });
  });
});
