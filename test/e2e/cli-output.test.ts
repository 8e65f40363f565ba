import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStateDatabase } from '../../src/state/database.js';
import { PausedSources } from '../../src/state/paused-sources.js';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type SyncEnv, syncEnv } from '../support/sync-env.js';
import { onTerminal, withoutColours } from '../support/terminal.js';

/** The terminal's lines as they end up (a redrawn progress line shows its last drawing). */
const visibleLines = (screen: string) =>
  withoutColours(screen)
    .split(/\r?\n/)
    .map((line) => line.split('\x1b[2K').at(-1)!);

describe('CLI output at a terminal and in pipes', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  /** The default level: nothing set in the environment (the other e2e tests set LOG_LEVEL=warn). */
  let defaults: NodeJS.ProcessEnv;
  const sync = (...args: string[]) => ['--config', env.configFile, 'sync', '--once', ...args];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'postgres');
    defaults = { ...env.env, LOG_LEVEL: '', LOG_FORMAT: '', NO_COLOR: undefined, FORCE_COLOR: undefined };
  });
  afterAll(async () => {
    await env.cleanup();
    await sandbox.close();
  });

  it('when a pass with a failing row runs at a terminal, then no JSON line reaches the screen and the row is shown with its reason', async () => {
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1), accountRow(2)]);
    dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1),
      'INV-7,C-404,F-7,2026-01-10,2026-02-09,120.00,20.00,,,,,,,',
    ]);
    const { code, screen } = await onTerminal(sync(), defaults);
    expect(code, screen).toBe(2);
    expect(screen).not.toMatch(/\{"level"/);
    const lines = visibleLines(screen);
    // The log line (stderr) says which row, where, and why; info lines are not shown.
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\d\d:\d\d:\d\d WARN {2}record failed {2}invoice INV-7 \(invoices\.csv line 3, accountSourceId\): account "C-404" is unknown/,
      ),
    );
    expect(screen).not.toContain('INFO');
    // The summary (stdout) lists it too.
    expect(lines).toContain(
      '  invoices.csv, line 3, accountSourceId: INV-7: account "C-404" is unknown to this source',
    );
    // A terminal shows the failed count, and the level of the warning, in their colours.
    expect(screen).toContain('invoices      created 1, updated 0, unchanged 0, \x1b[31mfailed 1\x1b[39m');
    expect(screen).toContain(' \x1b[33mWARN\x1b[39m  record failed');
  });

  it('when stdout is piped with --json, then it gets exactly one JSON line, the report and logs staying on the terminal', async () => {
    dropCsv(env.dropDir, 'accounts-2.csv', ACCOUNT_HEADER, [accountRow(3)]);
    const out = join(env.dir, 'summary.json');
    const { code, screen } = await onTerminal(sync('--json'), defaults, { stdoutFile: out });
    expect(code, screen).toBe(0);
    const stdout = readFileSync(out, 'utf8');
    expect(stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(JSON.parse(stdout)).toMatchObject({ accounts: { created: 1 }, apiRequests: expect.any(Number) });
    expect(screen).toContain('accounts      created 1, updated 0, unchanged 0, failed 0');
    // --log-format json puts JSON lines on the terminal as asked.
    const json = await onTerminal(
      ['--log-format', 'json', ...sync('--json')],
      { ...defaults, LOG_LEVEL: 'info' },
      { stdoutFile: out },
    );
    expect(json.code, json.screen).toBe(0);
    expect(json.screen).toMatch(/\{"level":30,.*"msg":"/);
    expect(readFileSync(out, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
  });

  it('when a pass is stopped by a fault after rows were refused, then the summary still counts them, as its run does', async () => {
    const own = syncEnv(sandbox, 'postgres');
    try {
      // One account without a currency (refused by the checks), one the API would take.
      dropCsv(own.dropDir, 'accounts.csv', ACCOUNT_HEADER, [
        accountRow(1),
        accountRow(2).replace(',EUR,', ',,'),
      ]);
      const result = await runCli(['--config', own.configFile, 'sync', '--once', '--json'], {
        env: { ...own.env, RECEIVABLES_ACCESS_TOKEN: 'refused-token' },
      });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/refused our credentials/);
      const summary = JSON.parse(result.stdout.trim().split('\n').at(-1)!);
      expect(summary.accounts).toMatchObject({ created: 0, failed: 1 });
      expect(summary.error).toMatchObject({
        code: expect.any(String),
        message: expect.stringMatching(/401|refused/),
      });
      expect(result.stderr).toContain('accounts      created 0, updated 0, unchanged 0, failed 1');
      // The file went back to the drop folder for the next pass.
      expect(readdirSync(own.dropDir)).toContain('accounts.csv');
    } finally {
      await own.cleanup();
    }
  });

  it('when sync --once --json cannot even start, then its one stdout line still says why, with counts at 0', async () => {
    // An alert target whose URL variable is unset: the runtime refuses to start (a configuration fault).
    const own = syncEnv(
      sandbox,
      'postgres',
      'alerts:\n  targets:\n    - { id: ops, type: webhook, urlEnv: TEST_UNSET_HOOK_URL }\n',
    );
    try {
      const result = await runCli(['--config', own.configFile, 'sync', '--once', '--json'], {
        env: { ...own.env, TEST_UNSET_HOOK_URL: '' },
      });
      expect(result.code).toBe(1);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({
        accounts: { created: 0, updated: 0, unchanged: 0, failed: 0 },
        apiRequests: 0,
        error: {
          code: expect.any(String),
          message: expect.stringContaining('TEST_UNSET_HOOK_URL is not set'),
        },
      });
    } finally {
      await own.cleanup();
    }
  });

  it('when a source is paused (automatically after failed runs), then sync --once leaves it alone and exits 1 saying why', async () => {
    const own = syncEnv(sandbox, 'postgres');
    try {
      dropCsv(own.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
      const migrated = await runCli(['--config', own.configFile, 'migrate'], { env: own.env });
      expect(migrated.code, migrated.stderr).toBe(0);
      const state = await openStateDatabase({
        databaseUrl: TEST_DATABASE_URL,
        dataDir: own.dir,
        schema: own.env.DATABASE_SCHEMA!,
        migrate: false,
      });
      try {
        // As the pass watch leaves it after failed runs (the source's row exists once it ran).
        await new PausedSources(state.db).set('erp-csv', 'csv', true, {
          by: 'auto',
          reason: 'paused automatically after 3 failed runs: x',
        });
      } finally {
        await state.close();
      }
      const accountsBefore = sandbox.deps.store.accounts.size;
      const result = await runCli(['--config', own.configFile, 'sync', '--once', '--json'], { env: own.env });
      expect(result.code, result.stderr + result.stdout).toBe(1);
      expect(result.stderr).toContain(
        'not synced, paused: erp-csv (paused automatically after 3 failed runs: x). Once the cause is fixed, resume it: `node bin/receivables-sync.js resume --source erp-csv`',
      );
      expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!).accounts.created).toBe(0);
      expect(readdirSync(own.dropDir)).toContain('accounts.csv');
      expect(sandbox.deps.store.accounts.size).toBe(accountsBefore);
    } finally {
      await own.cleanup();
    }
  });

  it('when a dropped file is still being written (newer than stableSeconds), then sync --once says it was left for the next pass, in text and in --json', async () => {
    const own = syncEnv(sandbox, 'postgres');
    try {
      const config = readFileSync(own.configFile, 'utf8').replace('stableSeconds: 0', 'stableSeconds: 3600');
      writeFileSync(own.configFile, config);
      dropCsv(own.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1)]);
      const text = await runCli(['--config', own.configFile, 'sync', '--once'], { env: own.env });
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(
        'erp-csv: 1 file left for the next pass, still being written (modified less than stableSeconds = 3600 s ago): accounts.csv',
      );
      const json = await runCli(['--config', own.configFile, 'sync', '--once', '--json'], { env: own.env });
      expect(json.code, json.stderr).toBe(0);
      const summary = JSON.parse(json.stdout.trim().split('\n').at(-1)!);
      expect(summary.waiting).toEqual([
        { sourceId: 'erp-csv', files: ['accounts.csv'], stableSeconds: 3600 },
      ]);
      expect(summary.accounts.created).toBe(0);
      expect(readdirSync(own.dropDir)).toContain('accounts.csv');
    } finally {
      await own.cleanup();
    }
  });

  it('when a synced file is dropped again as it was, then its rows count unchanged and the summary says it was skipped', async () => {
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [accountRow(1), accountRow(2)]);
    const result = await runCli(sync(), { env: defaults });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('accounts      created 0, updated 0, unchanged 2, failed 0');
    expect(result.stdout).toMatch(
      /^1 file skipped: same content as accounts\.csv \(synced \d{4}-\d\d-\d\d \d\d:\d\d\)$/m,
    );
    // Logs went to stderr as JSON lines (not a terminal), none of them on stdout.
    expect(result.stdout).not.toContain('"level"');
    expect(
      result.stderr
        .split('\n')
        .filter(Boolean)
        .every((line) => line.startsWith('{')),
    ).toBe(true);
    // Dropped again under other names, a copy of a copy: still named after the file first synced.
    for (const name of ['accounts-copy.csv', 'accounts-copy-2.csv']) {
      dropCsv(env.dropDir, name, ACCOUNT_HEADER, [accountRow(1), accountRow(2)]);
      const again = await runCli(sync(), { env: defaults });
      expect(again.stdout).toMatch(
        new RegExp(
          `^1 file skipped: same content as accounts\\.csv \\(synced .*\\): ${name.replace('.', '\\.')}$`,
          'm',
        ),
      );
    }
  });
});

describe('the progress line during a rate-limit pause', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 4, windowSeconds: 2 } });
    env = syncEnv(sandbox, 'postgres');
  });
  afterAll(async () => {
    await env.cleanup();
    await sandbox.close();
  });

  it('when the quota is used up, then the terminal says the pass waits for the rate limit and when it resumes, in seconds', async () => {
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 6).map((i) => accountRow(i)),
    );
    const { code, screen } = await onTerminal(['--config', env.configFile, 'sync', '--once'], env.env);
    expect(code, screen).toBe(0);
    expect(screen).toMatch(
      /accounts\.csv: 6 of ~6 rows read, \d done, 0 failed \| waiting for the rate limit, resumes in \d s/,
    );
    expect(screen).toContain('accounts      created 6, updated 0, unchanged 0, failed 0');
    expect(screen).not.toMatch(/\{"level"/);
  });
});
