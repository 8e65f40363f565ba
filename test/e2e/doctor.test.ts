import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * `doctor` against a sandbox over HTTP, the real Postgres and Redis: everything good exits 0; each
 * broken part is named by its own check, with the fix, and exits 1. Nothing is written to the API.
 */

interface Check {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('doctor', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  let sqlEnv: SyncEnv;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'postgres');
    env.env.REDIS_URL = TEST_REDIS_URL;
    mkdirSync(env.dropDir, { recursive: true });
    const migrated = await runCli(['--config', env.configFile, 'migrate'], { env: env.env });
    expect(migrated.code, migrated.stderr).toBe(0);
    sqlEnv = syncEnv(
      sandbox,
      'postgres',
      [
        '  - id: billing-db',
        '    type: sql',
        '    urlEnv: BILLING_DATABASE_URL',
        '    streams:',
        '      accounts:',
        '        query: select relname as "sourceId", no_such_column from pg_class',
        '',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    await env?.cleanup();
    await sqlEnv?.cleanup();
    await sandbox?.close();
  });

  async function doctor(over: NodeJS.ProcessEnv = {}, args: string[] = [], on: SyncEnv = env) {
    const result = await runCli(['--config', on.configFile, 'doctor', '--json', ...args], {
      env: { ...on.env, ...over },
    });
    const report = lastJsonLine(result.stdout) as { ok: boolean; checks: Check[] };
    const check = (name: string) => report.checks.find((c) => c.name === name);
    return { ...result, report, check };
  }

  it('when everything is set up, then every check passes and the exit code is 0', async () => {
    const statsBefore = await sandbox.admin('GET', '/stats');
    const result = await doctor();
    expect(result.code, result.stderr).toBe(0);
    expect(result.report.ok).toBe(true);
    expect(result.report.checks.map((c) => c.name)).toEqual([
      'config',
      'alerts',
      'state DB',
      'redis',
      'api',
      'discovery',
      'token',
      'organization',
      'document write',
      'rate limit',
      'clock',
      'source erp-csv',
    ]);
    expect(result.report.checks.filter((c) => c.status !== 'ok')).toEqual([]);
    expect(result.check('rate limit')?.detail).toMatch(/RateLimit-Policy: .*300.*60/);
    expect(result.check('organization')?.detail).toContain(sandbox.organizationId);
    // The human table goes to stderr with --json; nothing was written to the service.
    expect(result.stderr).toMatch(/^ok {4}config/m);
    expect(await sandbox.admin('GET', '/stats')).toEqual(statsBefore);
  });

  it.each<[string, NodeJS.ProcessEnv, string, RegExp]>([
    [
      'a base URL that is not the API',
      { RECEIVABLES_BASE_URL: 'BASE/nope' },
      'api',
      /answered 404: is .* the service's \{base_url\}/,
    ],
    [
      'an unreachable API',
      { RECEIVABLES_BASE_URL: 'http://127.0.0.1:9' },
      'api',
      /unreachable.*RECEIVABLES_BASE_URL/,
    ],
    ['a bad token', { RECEIVABLES_ACCESS_TOKEN: 'not-a-token' }, 'token', /refused \(401\)/],
    [
      'a wrong organization id',
      { RECEIVABLES_ORGANIZATION_ID: '00000000-0000-4000-8000-000000000000' },
      'organization',
      /00000000-0000-4000-8000-000000000000 is not among .*RECEIVABLES_ORGANIZATION_ID/,
    ],
    ['Redis down', { REDIS_URL: 'redis://127.0.0.1:1' }, 'redis', /unreachable.*REDIS_URL/],
    [
      'the state DB down',
      { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/test' },
      'state DB',
      /Postgres.*DATABASE_URL/,
    ],
  ])(
    'when the setup has %s, then that check fails with the fix, and exit 1',
    async (_, over, name, reason) => {
      const resolved = Object.fromEntries(
        Object.entries(over).map(([k, v]) => [k, v?.replace('BASE', sandbox.baseUrl)]),
      );
      const result = await doctor(resolved);
      expect(result.code, result.stderr).toBe(1);
      expect(result.report.ok).toBe(false);
      expect(result.check(name)).toMatchObject({ status: 'fail', detail: expect.stringMatching(reason) });
      expect(result.report.checks.filter((c) => c.status === 'fail').map((c) => c.name)).toEqual([name]);
    },
  );

  it("when an alert target's URL variable is unset, then the alerts check names the variable (sync would refuse to start), and exit 1", async () => {
    const alerting = syncEnv(
      sandbox,
      'postgres',
      'alerts:\n  targets:\n    - { id: ops-hook, type: webhook, urlEnv: TEST_ALERTS_HOOK_URL }\n',
    );
    try {
      const unset = await doctor({ TEST_ALERTS_HOOK_URL: '' }, [], alerting);
      expect(unset.code).toBe(1);
      expect(unset.check('alerts')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('alerts.targets.ops-hook: TEST_ALERTS_HOOK_URL is not set'),
      });
      const set = await doctor({ TEST_ALERTS_HOOK_URL: 'https://hooks.example/secret-path' }, [], alerting);
      expect(set.check('alerts')).toMatchObject({
        status: 'ok',
        detail: expect.stringContaining('ops-hook (webhook)'),
      });
      expect(set.stdout + set.stderr).not.toContain('secret-path');
    } finally {
      await alerting.cleanup();
    }
  });

  it('when --trace-http is given, then its requests are in the HAR file, the token redacted', async () => {
    const har = join(env.dir, 'doctor.har');
    const result = await doctor({}, ['--trace-http', har]);
    expect(result.code, result.stderr).toBe(0);
    const text = readFileSync(har, 'utf8');
    const urls = (JSON.parse(text).log.entries as Array<{ request: { url: string } }>).map(
      (e) => e.request.url,
    );
    expect(urls).toContain(`${sandbox.baseUrl}/api/public/v1/status`);
    expect(urls).toContain(`${sandbox.baseUrl}/api/public/v1/organizations`);
    expect(text).not.toContain(sandbox.accessToken);
  });

  it('when the token may not read accounts, then the token check names the missing scope', async () => {
    const limited = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
    const result = await doctor({ RECEIVABLES_ACCESS_TOKEN: limited.accessToken });
    expect(result.code).toBe(1);
    expect(result.check('token')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/may not read accounts \(403\): it needs accounts:read/),
    });
  });

  it('when the drop folder is missing, then its source check fails, and --source checks it alone', async () => {
    rmSync(env.dropDir, { recursive: true, force: true });
    const result = await doctor({}, ['--source', 'erp-csv']);
    expect(result.code).toBe(1);
    expect(result.check('source erp-csv')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/does not exist: create it/),
    });
  });

  it("when the drop folder holds a file no kind takes, then the source check warns naming it, with each kind's configured format, and the exit code stays 0", async () => {
    const german = syncEnv(
      sandbox,
      'postgres',
      [
        '    files: { accounts: "Kunden*.csv" }',
        '    format: { encoding: windows-1252, delimiter: ";", decimalSeparator: ",", thousandsSeparator: ".", dateFormat: dd.MM.yyyy }',
        '    columns: { accounts: { sourceId: Kundennummer, fullName: Name, currencyCode: { value: EUR } } }',
        '',
      ].join('\n'),
    );
    try {
      mkdirSync(german.dropDir, { recursive: true });
      writeFileSync(join(german.dropDir, 'Kunden-2026.csv'), 'Kundennummer;Name\n');
      writeFileSync(join(german.dropDir, 'Rechnungen-2026.csv'), 'Rechnungsnummer;Brutto\n');
      const result = await doctor({}, ['--source', 'erp-csv'], german);
      expect(result.code, result.stderr).toBe(0);
      const check = result.check('source erp-csv');
      expect(check?.status).toBe('warn');
      expect(check?.detail).toContain(
        '1 file of the drop folder matches no kind (files:) and is left where it is: Rechnungen-2026.csv (add a pattern under files:, or move it)',
      );
      expect(check?.detail).toContain(
        'accounts "Kunden*.csv": windows-1252, delimiter ";", decimal ",", thousands ".", dates dd.MM.yyyy, header on line 1; columns set',
      );
      expect(check?.detail).toContain('invoices "invoices*.csv": windows-1252, delimiter ";"');
      expect(result.stderr).toMatch(/^warn {2}source erp-csv/m);
    } finally {
      await german.cleanup();
    }
  });

  it('when a schedule is not a cron expression, then doctor fails it as the worker would (which refuses to start), and a valid one passes', async () => {
    const scheduled = syncEnv(sandbox, 'postgres', '    schedule: "every 5 minutes"\n');
    try {
      mkdirSync(scheduled.dropDir, { recursive: true });
      const bad = await doctor({}, [], scheduled);
      expect(bad.code).toBe(1);
      expect(bad.check('schedules')).toMatchObject({
        status: 'fail',
        detail: expect.stringContaining('"every 5 minutes" is not a valid cron expression'),
      });
      writeFileSync(
        scheduled.configFile,
        readFileSync(scheduled.configFile, 'utf8').replace('every 5 minutes', '*/5 * * * *'),
      );
      const good = await doctor({}, [], scheduled);
      expect(good.check('schedules')).toMatchObject({ status: 'ok', detail: 'valid for erp-csv' });
    } finally {
      await scheduled.cleanup();
    }
  });

  it('when a SQL stream query does not compile, then the source check names the stream and the error', async () => {
    const result = await doctor(
      { BILLING_DATABASE_URL: TEST_DATABASE_URL },
      ['--source', 'billing-db'],
      sqlEnv,
    );
    expect(result.code).toBe(1);
    expect(result.check('source billing-db')).toMatchObject({
      status: 'fail',
      detail: expect.stringMatching(/the accounts query does not compile: .*no_such_column/),
    });
    expect(result.report.checks.map((c) => c.name)).not.toContain('source erp-csv');
  });
});
