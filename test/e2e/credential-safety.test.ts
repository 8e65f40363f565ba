import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * The attack on credentials a security review found: a refresh token spent by a run that cannot
 * store its successor. The sandbox's token endpoint follows RFC 9700: a refresh token is good once,
 * and presenting a spent one revokes its whole family. So "the token was not burned" is checked the
 * hard way: the same refresh token must still work afterwards.
 */
describe('a refresh token and a credential store that cannot keep its successor', () => {
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

  const freshEnv = () => {
    const env = syncEnv(sandbox, 'embedded');
    env.env.RECEIVABLES_ACCESS_TOKEN = '';
    envs.push(env);
    return env;
  };
  const refreshTokenOf = async () =>
    (await sandbox.admin('POST', '/tokens', { withRefreshToken: true })).refreshToken as string;
  const cli = (env: SyncEnv, args: string[], over: NodeJS.ProcessEnv) =>
    runCli(['--config', env.configFile, ...args], { env: { ...env.env, ...over } });

  it('when RECEIVABLES_TOKEN_KEY is missing, then sync --once and doctor spend nothing, say the fix, and the token still syncs once the key is set', async () => {
    const env = freshEnv();
    const refreshToken = await refreshTokenOf();
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
    const keyless = { RECEIVABLES_REFRESH_TOKEN: refreshToken, RECEIVABLES_TOKEN_KEY: '' };

    const sync = await cli(env, ['sync', '--once'], keyless);
    expect(sync.code).toBe(1);
    expect(sync.stderr).toMatch(/RECEIVABLES_TOKEN_KEY is not set.*openssl rand -base64 32/);
    expect(sync.stderr).toMatch(/the refresh token of RECEIVABLES_REFRESH_TOKEN was not used/);

    const doctor = await cli(env, ['doctor', '--json'], keyless);
    expect(doctor.code).toBe(1);
    const token = lastJsonLine(doctor.stdout).checks.find((c: { name: string }) => c.name === 'token');
    expect(token).toMatchObject({ status: 'fail' });
    expect(token.detail).toMatch(/RECEIVABLES_TOKEN_KEY is not set.*was not used/);
    expect(existsSync(join(env.dir, 'data', 'credentials.enc'))).toBe(false);

    // Not burned: the same token is exchanged now (a spent one would revoke its family: invalid_grant).
    const withKey = { RECEIVABLES_REFRESH_TOKEN: refreshToken, RECEIVABLES_TOKEN_KEY: KEY };
    const synced = await cli(env, ['sync', '--once', '--json'], withKey);
    expect(synced.code, synced.stderr).toBe(0);
    expect(lastJsonLine(synced.stdout).accounts).toMatchObject({ created: 1, failed: 0 });
  });

  it('when the data folder cannot take a file, then the refresh token is not spent and the error names the folder', async () => {
    const env = freshEnv();
    const refreshToken = await refreshTokenOf();
    const blocker = join(env.dir, 'not-a-folder');
    writeFileSync(blocker, 'a file where the data folder should be');
    const blockedDir = join(blocker, 'data');
    const blocked = { ...env, configFile: join(env.dir, 'blocked.yaml') };
    writeFileSync(
      blocked.configFile,
      readFileSync(env.configFile, 'utf8').replace(join(env.dir, 'data'), blockedDir),
    );
    const over = { RECEIVABLES_REFRESH_TOKEN: refreshToken, RECEIVABLES_TOKEN_KEY: KEY };
    const doctor = await cli(blocked, ['doctor', '--json'], over);
    const token = lastJsonLine(doctor.stdout).checks.find((c: { name: string }) => c.name === 'token');
    expect(token).toMatchObject({ status: 'fail' });
    expect(token.detail).toContain(`cannot store credentials in ${blockedDir}`);
    expect(token.detail).toMatch(/was not used/);

    const imported = await cli(blocked, ['auth', 'import'], over);
    expect(imported.code).toBe(1);
    expect(imported.stderr).toContain(`cannot store credentials in ${blockedDir}`);

    // Not burned: imported into a folder that takes it.
    const retried = await cli(env, ['auth', 'import'], over);
    expect(retried.code, retried.stderr).toBe(0);
  });

  it('when a stale RECEIVABLES_REFRESH_TOKEN stays in the environment after its rotation was stored, then the stored token wins and the family lives', async () => {
    const env = freshEnv();
    const refreshToken = await refreshTokenOf();
    const over = { RECEIVABLES_REFRESH_TOKEN: refreshToken, RECEIVABLES_TOKEN_KEY: KEY };
    // doctor exchanges it (nothing is stored yet) and says so: a write at the token endpoint.
    const doctor = await cli(env, ['doctor', '--json'], over);
    const checks = lastJsonLine(doctor.stdout).checks as Array<{
      name: string;
      status: string;
      detail: string;
    }>;
    expect(checks.find((c) => c.name === 'token')).toMatchObject({ status: 'ok' });
    const rotation = checks.find((c) => c.name === 'token refresh');
    expect(rotation?.detail).toMatch(
      /exchanged at the token endpoint \(a write there: it is spent; its successor is stored in .*credentials\.enc\)/,
    );

    // The environment still holds the spent token: presenting it would revoke the family.
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(2)]);
    for (const round of [1, 2]) {
      const synced = await cli(env, ['sync', '--once', '--json'], over);
      expect(synced.code, `round ${round}: ${synced.stderr}`).toBe(0);
    }
    const again = await cli(env, ['doctor', '--json'], over);
    expect(again.code, again.stdout).toBe(0);
    const names = (lastJsonLine(again.stdout).checks as Array<{ name: string }>).map((c) => c.name);
    expect(names).not.toContain('token refresh');
  });
});
