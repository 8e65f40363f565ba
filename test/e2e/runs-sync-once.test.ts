import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { dropAccountsAndInvoices } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import {
  lastJsonLine,
  runsOf,
  type SyncEnv,
  startSyncOnce,
  syncEnv,
  untilMidPass,
} from '../support/sync-env.js';

const ACCOUNTS = 30;
const INVOICES = 150;

describe('sync --once: a run never stays running', () => {
  // A sandbox per test: each one counts the invoices of its own pass.
  let sandbox: TestSandbox;
  beforeEach(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterEach(() => sandbox.close());

  async function syncAgainExactly(env: SyncEnv) {
    await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
    const again = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
    expect(again.code, again.stderr).toBe(0);
    const summary = lastJsonLine(again.stdout);
    expect(summary.invoices.failed).toBe(0);
    // The sandbox refuses a second invoice of a sourceId: every one exists exactly once.
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: ACCOUNTS, invoices: INVOICES });
  }

  it('when SIGTERM comes mid-pass and the pass outlasts queue.shutdownSeconds, then the pass is cut, its run is interrupted ("shut down"), exit 1, and the next pass finishes the work', async () => {
    const env = syncEnv(sandbox, 'postgres', 'queue:\n  shutdownSeconds: 0.5\n');
    try {
      dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES);
      await sandbox.admin('PUT', '/faults', { latencyMs: 40 });
      const { child, stderr } = startSyncOnce(env, ['--json']);
      await untilMidPass(sandbox, { child, stderr }, (stats) => stats.invoices >= 20);
      const signalled = Date.now();
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, stderr()).toBe(1);
      expect(Date.now() - signalled).toBeLessThan(5000);
      expect(stderr()).toMatch(
        /SIGTERM: not finished within 0\.5 s: the pass in progress was cut short; run #\d+ marked interrupted/,
      );
      expect(await runsOf(env)).toEqual([
        { id: expect.any(String), status: 'interrupted', error: 'shut down' },
      ]);

      await syncAgainExactly(env);
      const runs = await runsOf(env);
      expect(runs.map((r) => r.status)).toEqual(['interrupted', 'succeeded']);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env.cleanup();
    }
  });

  it('when SIGTERM comes mid-pass and the pass finishes within queue.shutdownSeconds, then its run succeeds and the exit code is the pass’s', async () => {
    const env = syncEnv(sandbox, 'postgres');
    try {
      dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES);
      await sandbox.admin('PUT', '/faults', { latencyMs: 10 });
      const { child, stderr } = startSyncOnce(env, ['--json']);
      await untilMidPass(sandbox, { child, stderr }, (stats) => stats.invoices >= 20);
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(code, stderr()).toBe(0);
      expect(stderr()).toContain('SIGTERM: finishing the pass in progress');
      expect((await runsOf(env)).map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env.cleanup();
    }
  });

  it('when the process is killed (SIGKILL) mid-pass, then the next pass marks the dead run interrupted and no run is left running', async () => {
    const env = syncEnv(sandbox, 'postgres');
    try {
      dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES);
      await sandbox.admin('PUT', '/faults', { latencyMs: 15 });
      const run = startSyncOnce(env, ['--json']);
      const { child } = run;
      await untilMidPass(sandbox, run, (stats) => stats.invoices >= 20);
      child.kill('SIGKILL');
      await once(child, 'exit');
      // Nobody could close it: it is `running` until a pass of its source finds its process gone.
      const [dead] = await runsOf(env);
      expect(dead).toMatchObject({ status: 'running' });

      await syncAgainExactly(env);
      expect(await runsOf(env)).toEqual([
        {
          id: dead!.id,
          status: 'interrupted',
          error: 'its process ended before the pass finished (killed or crashed)',
        },
        { id: expect.any(String), status: 'succeeded', error: null },
      ]);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env.cleanup();
    }
  });
});
