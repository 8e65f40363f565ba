import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { dropAccountsAndInvoices, range } from '../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, startSyncOnce, syncEnv, untilMidPass } from '../support/sync-env.js';

const ACCOUNTS = 30;
const INVOICES = 150;

async function countByKind(sandbox: TestSandbox) {
  const stats = await sandbox.admin('GET', '/stats');
  return { accounts: stats.accounts as number, invoices: stats.invoices as number };
}

/** Every sourceId of the drop exists exactly once in the sandbox (the sandbox refuses duplicates, so count and list). */
async function assertExactlyOnce(sandbox: TestSandbox) {
  const accounts = await sandbox.call('GET', '/accounts', {
    query: { organizationId: sandbox.organizationId },
  });
  const accountIds = accounts.body.nodes.map((a: any) => a.source?.sourceId).sort();
  expect(accountIds).toEqual(
    range(1, ACCOUNTS)
      .map((i) => `C-${i}`)
      .sort(),
  );
  const invoices = await sandbox.call('GET', '/invoices', {
    query: { organizationId: sandbox.organizationId },
  });
  const invoiceIds = invoices.body.nodes.map((d: any) => d.sourceId).sort();
  expect(invoiceIds).toEqual(
    range(1, INVOICES)
      .map((i) => `INV-${i}`)
      .sort(),
  );
}

const dropAll = (env: SyncEnv) =>
  dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES, (i) => ({ paid: i % 3 === 0 ? '10.00' : '' }));

describe('sync --once: crash and faults', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox.close());

  it('when the process is killed with SIGKILL in the middle of a sync and run again, then every record exists exactly once', async () => {
    const env = syncEnv(sandbox, 'postgres');
    try {
      dropAll(env);
      await sandbox.admin('PUT', '/faults', { latencyMs: 15 });
      const run = startSyncOnce(env, ['--json']);
      const { child } = run;
      // Kill it once some invoices exist and others do not.
      await untilMidPass(sandbox, run, (stats) => stats.invoices >= 20);
      child.kill('SIGKILL');
      await once(child, 'exit');
      const midway = await countByKind(sandbox);
      expect(midway.invoices).toBeLessThan(INVOICES);
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });

      const again = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(again.code, again.stderr).toBe(0);
      const summary = lastJsonLine(again.stdout);
      expect(summary.invoices.failed).toBe(0);
      expect(summary.invoices.created + summary.invoices.unchanged + summary.invoices.updated).toBe(INVOICES);
      await assertExactlyOnce(sandbox);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env.cleanup();
    }
  });
});

describe('sync --once under injected faults', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox.close());

  it('when 10% of requests fail with 5xx and 5% of writes lose their connection after commit, then the result is exact', async () => {
    const env = syncEnv(sandbox, 'embedded');
    try {
      dropAll(env);
      await sandbox.admin('PUT', '/faults', {
        errorRate: 0.1,
        errorStatuses: [500, 502, 503],
        dropAfterCommitRate: 0.05,
      });
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      await sandbox.admin('PUT', '/faults', { errorRate: 0, dropAfterCommitRate: 0 });
      expect(result.code, result.stderr).toBe(0);
      const summary = lastJsonLine(result.stdout);
      expect(summary.accounts).toEqual({ created: ACCOUNTS, updated: 0, unchanged: 0, failed: 0 });
      expect(summary.invoices).toEqual({ created: INVOICES, updated: 0, unchanged: 0, failed: 0 });
      await assertExactlyOnce(sandbox);
      const paid = await sandbox.call('GET', '/invoices', {
        query: { organizationId: sandbox.organizationId, filters: 'sourceId:is:INV-3' },
      });
      expect(paid.body.nodes[0].paidAmount).toBe('10.00');
    } finally {
      await env.cleanup();
    }
  });
});
