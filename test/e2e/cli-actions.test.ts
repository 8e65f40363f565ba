import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, accountRow, dropCsv } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';
import { onTerminal } from '../support/terminal.js';

interface FailureLine {
  id: string;
  sourceKey: string;
}

/**
 * The dashboard's actions on a source and its failures, from the command line (`pause`, `resume`,
 * `failures dismiss`), through the built CLI: what `status`, `failures` and `sync --once` show
 * afterwards.
 */
describe('pause, resume and failures dismiss from the command line', () => {
  let sandbox: TestSandbox;
  let env: SyncEnv;
  const cli = (...args: string[]) => runCli(['--config', env.configFile, ...args], { env: env.env });
  const status = async () => {
    const result = await cli('status', '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout).sources[0] as {
      paused: { by: string; reason: string | null; at: string | null } | null;
      openFailures: number;
    };
  };
  const openFailures = async (): Promise<FailureLine[]> => {
    const result = await cli('failures', '--json');
    expect(result.code, result.stderr).toBe(0);
    return result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as FailureLine);
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = syncEnv(sandbox, 'postgres');
    // Two accounts synced, three refused by the checks (no currency): three open failures.
    dropCsv(env.dropDir, 'accounts.csv', ACCOUNT_HEADER, [
      accountRow(1),
      accountRow(2),
      ...[3, 4, 5].map((i) => accountRow(i).replace(',EUR,', ',,')),
    ]);
    const pass = await cli('sync', '--once');
    expect(pass.code, pass.stderr).toBe(2);
  });
  afterAll(async () => {
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when a source is paused, then status says so and why, sync --once leaves its files alone; once resumed, they sync', async () => {
    const paused = await cli('pause', '--source', 'erp-csv', '--reason', 'month-end close');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^erp-csv is paused: .*resume --source erp-csv/);
    expect((await status()).paused).toMatchObject({
      by: 'user',
      reason: expect.stringMatching(/^paused by .+ from the command line: month-end close$/),
      at: expect.any(String),
    });
    const text = await cli('status');
    expect(text.stdout).toMatch(
      /^ {2}paused by .+ from the command line: month-end close \(since .+\); not synced until `.*resume --source erp-csv`$/m,
    );
    // At a terminal, the word is coloured.
    const screen = await onTerminal(['--config', env.configFile, 'status'], {
      ...env.env,
      NO_COLOR: undefined,
      FORCE_COLOR: undefined,
    });
    expect(screen.screen).toContain('\x1b[33mpaused\x1b[39m by');

    dropCsv(env.dropDir, 'accounts-2.csv', ACCOUNT_HEADER, [accountRow(6)]);
    const skipped = await cli('sync', '--once', '--json');
    expect(skipped.code, skipped.stderr).toBe(1);
    expect(skipped.stderr).toContain('not synced, paused: erp-csv (paused by');
    expect(skipped.stderr).toMatch(/resume it: `.*resume --source erp-csv`/);
    expect(lastJsonLine(skipped.stdout).accounts.created).toBe(0);
    expect(readdirSync(env.dropDir)).toContain('accounts-2.csv');

    const resumed = await cli('resume', '--source', 'erp-csv');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/^erp-csv is resumed \(it was paused by .+: month-end close\)/);
    expect((await status()).paused).toBeNull();
    expect((await cli('status')).stdout).not.toMatch(/^ {2}paused/m);
    const again = await cli('resume', '--source', 'erp-csv');
    expect(again.stdout).toBe('erp-csv was not paused: nothing changed.\n');
    const synced = await cli('sync', '--once', '--json');
    expect(synced.code, synced.stderr).toBe(0);
    expect(lastJsonLine(synced.stdout).accounts.created).toBe(1);
  });

  it('when a source that is not configured is paused, then it exits 1 naming it', async () => {
    const result = await cli('pause', '--source', 'nope');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('no source "nope" in the configuration');
  });

  it('when failures are dismissed by id, then failures and status no longer count them; --all dismisses the rest', async () => {
    const before = await openFailures();
    expect(before.map((f) => f.sourceKey).sort()).toEqual(['C-3', 'C-4', 'C-5']);
    const listed = await cli('failures');
    const c3 = before.find((f) => f.sourceKey === 'C-3')!;
    // The listing shows the id a dismissal takes.
    expect(listed.stdout).toContain(`#${c3.id} erp-csv account C-3 [validate;`);

    const noReason = await cli('failures', 'dismiss', c3.id);
    expect(noReason.code).toBe(1);
    expect(noReason.stderr).toContain('dismiss needs --reason TEXT');

    const dismissed = await cli(
      'failures',
      'dismiss',
      `#${c3.id}`,
      '--reason',
      'fixed by hand on the service',
    );
    expect(dismissed.code, dismissed.stderr).toBe(0);
    expect(dismissed.stdout).toMatch(/^1 failure\(s\) dismissed/);
    expect((await openFailures()).map((f) => f.sourceKey).sort()).toEqual(['C-4', 'C-5']);
    expect((await status()).openFailures).toBe(2);
    expect((await cli('status')).stdout).toContain('  open failures: 2 (see `failures --source erp-csv`)');

    // The same id again: nothing is open under it any more.
    const twice = await cli('failures', 'dismiss', c3.id, '--reason', 'again');
    expect(twice.code).toBe(1);
    expect(twice.stdout).toContain(
      `Not open (resolved or dismissed already, another source's, or unknown): #${c3.id}.`,
    );

    const all = await cli(
      'failures',
      'dismiss',
      '--all',
      '--source',
      'erp-csv',
      '--reason',
      'rows dropped',
      '--json',
    );
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ dismissed: 2, notOpen: [] });
    expect((await cli('failures')).stdout).toBe('No open failures.\n');
    expect((await status()).openFailures).toBe(0);
  });
});
