import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCompat } from '../../src/sandbox/options.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../support/drop-data.js';
import { seedConnectorAccount, startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * A server whose protected resource metadata names `{base_url}` (RFC 9728's derivation from the
 * spec's well-known address) or `{base_url}/api/public/v1`: a refresh-token configuration syncs a
 * drop folder either way (the refresh grant goes to the spec's token endpoint, no discovery), and
 * `auth import` takes the token.
 */
describe.each<SandboxCompat['protectedResource']>(['api', 'base'])(
  'first contact with a server whose protected resource is named the "%s" way',
  (form) => {
    let sandbox: TestSandbox;
    let env: SyncEnv;
    const refreshTokenOf = async () =>
      (await sandbox.admin('POST', '/tokens', { withRefreshToken: true })).refreshToken as string;

    beforeAll(async () => {
      sandbox = await startTestSandbox({ compat: { protectedResource: form } });
      env = syncEnv(sandbox, 'embedded');
      env.env.RECEIVABLES_ACCESS_TOKEN = '';
      env.env.RECEIVABLES_TOKEN_KEY = 'a passphrase for the stored tokens of this test';
    });
    afterAll(async () => {
      await env?.cleanup();
      await sandbox?.close();
    });

    it('when only a refresh token is configured, then sync --once exchanges it and syncs the drop', async () => {
      dropCsv(
        env.dropDir,
        'accounts.csv',
        ACCOUNT_HEADER,
        range(1, 3).map((i) => accountRow(i)),
      );
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], {
        env: { ...env.env, RECEIVABLES_REFRESH_TOKEN: await refreshTokenOf() },
      });
      expect(result.code, result.stderr).toBe(0);
      expect(lastJsonLine(result.stdout).accounts).toMatchObject({ created: 3, failed: 0 });
    });

    it('when sync --once runs with --trace-http, then every request of the pass is in the HAR file, with no token in it', async () => {
      // A state folder of its own: no stored credentials, so the refresh token is exchanged in the pass.
      const own = syncEnv(sandbox, 'embedded');
      try {
        const refreshToken = await refreshTokenOf();
        dropCsv(own.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(90)]);
        const har = join(own.dir, 'pass.har');
        // A trace left by an earlier run, readable by all: the new one replaces it, owner-only.
        writeFileSync(har, 'an older trace', { mode: 0o644 });
        const result = await runCli(
          ['--config', own.configFile, 'sync', '--once', '--json', '--trace-http', har],
          {
            env: {
              ...own.env,
              RECEIVABLES_ACCESS_TOKEN: '',
              RECEIVABLES_TOKEN_KEY: env.env.RECEIVABLES_TOKEN_KEY,
              RECEIVABLES_REFRESH_TOKEN: refreshToken,
            },
          },
        );
        expect(result.code, result.stderr).toBe(0);
        expect(result.stderr).toMatch(/HTTP trace: \d+ request\(s\) in .*pass\.har/);
        expect(statSync(har).mode & 0o777).toBe(0o600);
        const text = readFileSync(har, 'utf8');
        const entries = JSON.parse(text).log.entries as Array<{ request: any; response: any }>;
        // The API calls the summary counts, plus the one token grant, and nothing else.
        const api = entries.filter((e) => e.request.url.includes('/api/public/v1/'));
        expect(api).toHaveLength(lastJsonLine(result.stdout).apiRequests);
        const grants = entries.filter((e) => e.request.url.endsWith('/api/oauth/token'));
        expect(grants).toHaveLength(1);
        expect(entries).toHaveLength(api.length + grants.length);
        expect(grants[0]!.request.postData.text).toContain('refresh_token=%5Bredacted%5D');
        expect(api.some((e) => e.request.method === 'POST' && e.response.status === 201)).toBe(true);
        expect(text).not.toContain(refreshToken);
        expect(text).not.toMatch(/sbx_(at|rt)_/);
      } finally {
        await own.cleanup();
      }
    });

    it('when a refresh token is imported, then the stored credentials sync the next drop', async () => {
      const imported = await runCli(['--config', env.configFile, 'auth', 'import'], {
        env: { ...env.env, RECEIVABLES_REFRESH_TOKEN: await refreshTokenOf() },
      });
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stdout).toMatch(/^Imported\./);
      dropCsv(
        env.dropDir,
        'accounts-2.csv',
        ACCOUNT_HEADER,
        range(4, 5).map((i) => accountRow(i)),
      );
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(result.code, result.stderr).toBe(0);
      expect(lastJsonLine(result.stdout).accounts).toMatchObject({ created: 2, failed: 0 });
    });
  },
);

describe('a setup mistake', () => {
  it('when the drop folder does not exist, then sync --once exits 1 with the fix, not as an outage', async () => {
    const sandbox = await startTestSandbox();
    const env = syncEnv(sandbox, 'embedded');
    try {
      const result = await runCli(['--config', env.configFile, 'sync', '--once'], { env: env.env });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(
        /could not run: the drop folder .* does not exist: create it \(mkdir -p\), or fix the source's dropDir \(CSV_DROP_DIR_MISSING\)/,
      );
      expect(result.stderr).not.toMatch(/a part it depends on failed/);
    } finally {
      await env.cleanup();
      await sandbox.close();
    }
  });
});

describe('no accidental sync', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox?.close());

  it.each([['sync', '--once'], ['worker']])(
    'when `%s` runs in the repository with no configuration file, then exit 1 with a hint, nothing sent, examples/ untouched',
    async (...args) => {
      const sample = join(REPO_ROOT, 'examples', 'drop');
      const before = readdirSync(sample, { recursive: true }).map(String).sort();
      const statsBefore = await sandbox.admin('GET', '/stats');
      const result = await runCli(args, {
        cwd: REPO_ROOT,
        env: {
          RECEIVABLES_SYNC_CONFIG: '',
          RECEIVABLES_BASE_URL: sandbox.baseUrl,
          RECEIVABLES_ACCESS_TOKEN: sandbox.accessToken,
          REDIS_URL: 'redis://127.0.0.1:6379',
          DATABASE_URL: '',
          LOG_LEVEL: 'warn',
        },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/no source is configured: no configuration file was found/);
      expect(result.stderr).toMatch(/receivables-sync demo/);
      expect(readdirSync(sample, { recursive: true }).map(String).sort()).toEqual(before);
      expect(await sandbox.admin('GET', '/stats')).toEqual(statsBefore);
    },
  );
});

describe.each<SandboxCompat['managedActionStatus']>([400, 403, 409, 422])(
  'a server that answers managed-action-forbidden with status %i',
  (status) => {
    let sandbox: TestSandbox;
    let env: SyncEnv;
    beforeAll(async () => {
      sandbox = await startTestSandbox({ compat: { managedActionStatus: status } });
      env = syncEnv(sandbox, 'embedded');
    });
    afterAll(async () => {
      await env?.cleanup();
      await sandbox?.close();
    });

    it('when a row updates an account a connector manages, then that row fails with the code, the pass goes on, nothing is retried blindly', async () => {
      await seedConnectorAccount(sandbox, {
        sourceId: 'C-90',
        connectionId: 'erp-csv',
        fullName: 'Managed Ltd',
      });
      dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(90), accountRow(91)]);
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      // A 403 here is the record's refusal, not our credentials': the pass is not stopped (exit 2, not 1).
      expect(result.code, result.stderr).toBe(2);
      expect(lastJsonLine(result.stdout).accounts).toMatchObject({ created: 1, failed: 1 });
      const failures = await runCli(['--config', env.configFile, 'failures', '--json'], { env: env.env });
      const row = failures.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
        .find((f: { sourceKey: string }) => f.sourceKey === 'C-90');
      expect(row).toMatchObject({
        apiCode: 'app-invoicing.document.managed-action-forbidden',
        status,
        retryable: false,
      });
    });
  },
);
