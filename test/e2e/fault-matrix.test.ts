import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { dropAccountsAndInvoices } from '../support/drop-data.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import {
  lastJsonLine,
  runsOf,
  type SyncEnv,
  startSyncOnce,
  syncEnv,
  untilMidPass,
} from '../support/sync-env.js';
import { startPrivateRedis } from '../support/worker-process.js';

/**
 * Infrastructure faults are never a data problem: against the real CLI, a real sandbox over HTTP
 * and the real Postgres, each fault stops the pass with exit 1 and one line naming the cause, the
 * files stay in the drop folder (never `rejected/`), the run is recorded `failed` with the reason;
 * then the fault is lifted and a normal pass syncs everything exactly once.
 */

const ACCOUNTS = 12;
const INVOICES = 40;

/** Where the dropped files are: still waiting in the folder, claimed, archived or rejected. */
function filesOf(env: SyncEnv) {
  const list = (sub: string) => {
    const dir = join(env.dropDir, sub);
    return existsSync(dir)
      ? readdirSync(dir, { recursive: true })
          .map(String)
          .filter((f) => f.endsWith('.csv'))
      : [];
  };
  return {
    waiting: readdirSync(env.dropDir)
      .filter((f) => f.endsWith('.csv'))
      .sort(),
    processing: list('.processing'),
    rejected: list('rejected'),
  };
}

async function assertExactlyOnce(sandbox: TestSandbox) {
  const stats = await sandbox.admin('GET', '/stats');
  expect({ accounts: stats.accounts, invoices: stats.invoices }).toEqual({
    accounts: ACCOUNTS,
    invoices: INVOICES,
  });
  const invoices = await sandbox.call('GET', '/invoices', {
    query: { organizationId: sandbox.organizationId },
  });
  const ids = invoices.body.nodes.map((d: { sourceId: string }) => d.sourceId);
  expect(new Set(ids).size).toBe(INVOICES);
}

/** A normal pass once the fault is lifted: everything synced once, the folder emptied. */
async function healedPass(sandbox: TestSandbox, env: SyncEnv) {
  const healed = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
  expect(healed.code, healed.stderr).toBe(0);
  expect(lastJsonLine(healed.stdout).accounts.failed).toBe(0);
  await assertExactlyOnce(sandbox);
  expect(filesOf(env)).toEqual({ waiting: [], processing: [], rejected: [] });
}

describe('the fault matrix of sync --once', () => {
  let sandbox: TestSandbox;
  /** Each test: its own sandbox, state schema and drop folder (the state DB sessions are named). */
  beforeEach(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterEach(() => sandbox.close());

  /**
   * A pass of the test's own: its own state schema and drop folder. `retryAttempts`: the client's
   * tries of a request (default 8, about 25 s against an unreachable API); fewer where the test is
   * about what follows the budget, not its length.
   */
  const fresh = async (retryAttempts?: number) => {
    const env = syncEnv(
      sandbox,
      'postgres',
      retryAttempts ? `api:\n  retryAttempts: ${retryAttempts}\n` : '',
    );
    env.env.DATABASE_URL = `${TEST_DATABASE_URL}?application_name=${env.env.DATABASE_SCHEMA}`;
    dropAccountsAndInvoices(env.dropDir, ACCOUNTS, INVOICES);
    return env;
  };

  it('when the API is unreachable, then exit 1 names it, the files stay in the drop folder, and the next pass heals', async () => {
    const env = await fresh(3);
    try {
      const down = await runCli(['--config', env.configFile, 'sync', '--once'], {
        env: { ...env.env, RECEIVABLES_BASE_URL: 'http://127.0.0.1:9' },
      });
      expect(down.code, down.stderr).toBe(1);
      expect(down.stderr).toMatch(/could not run: the API at http:\/\/127\.0\.0\.1:9 is unreachable/);
      expect(down.stderr).toMatch(/check RECEIVABLES_BASE_URL and the network/);
      expect(
        down.stderr
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('receivables-sync:')),
      ).toHaveLength(1);
      expect(filesOf(env)).toEqual({
        waiting: ['accounts.csv', 'invoices.csv'],
        processing: [],
        rejected: [],
      });
      expect((await runsOf(env)).at(-1)).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('fetch failed'),
      });
      await healedPass(sandbox, env);
    } finally {
      await env.cleanup();
    }
  });

  it('when the API refuses the token on every call (401), then exit 1 names the credentials, even on an empty folder', async () => {
    const env = await fresh();
    try {
      const refused = await runCli(['--config', env.configFile, 'sync', '--once'], {
        env: { ...env.env, RECEIVABLES_ACCESS_TOKEN: 'not-a-valid-token' },
      });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toMatch(/could not run: the API at .* refused our credentials/);
      // A login would not help while the variable is set: the message says so.
      expect(refused.stderr).toMatch(/Fix or unset RECEIVABLES_ACCESS_TOKEN/);
      expect(filesOf(env).waiting).toEqual(['accounts.csv', 'invoices.csv']);
      expect(filesOf(env).rejected).toEqual([]);
      expect((await runsOf(env)).at(-1)).toMatchObject({
        status: 'failed',
        error: expect.stringMatching(/401|token/i),
      });

      const empty = syncEnv(sandbox, 'postgres');
      try {
        const onEmpty = await runCli(['--config', empty.configFile, 'sync', '--once'], {
          env: { ...empty.env, RECEIVABLES_ACCESS_TOKEN: 'not-a-valid-token' },
        });
        expect(onEmpty.code, onEmpty.stderr).toBe(1);
      } finally {
        await empty.cleanup();
      }
      await healedPass(sandbox, env);
    } finally {
      await env.cleanup();
    }
  });

  it('when the API fails with 5xx beyond the retry budget in the middle of a pass, then the pass stops, the run says why, nothing is rejected', async () => {
    const env = await fresh(3);
    try {
      await sandbox.admin('PUT', '/faults', { latencyMs: 20 });
      // Some accounts are written, then every request fails.
      const run = startSyncOnce(env);
      await untilMidPass(sandbox, run, (stats) => stats.accounts >= 3);
      await sandbox.admin('PUT', '/faults', { errorRate: 1, errorStatuses: [503], latencyMs: 0 });
      const [code] = await once(run.child, 'exit');
      const stderr = run.stderr();
      await sandbox.admin('PUT', '/faults', { errorRate: 0 });
      expect(code, stderr).toBe(1);
      expect(stderr).toMatch(/could not run: the API at .* is failing \(HTTP 503\)/);
      expect(filesOf(env).rejected).toEqual([]);
      expect(filesOf(env).processing).toEqual([]);
      expect(filesOf(env).waiting).toContain('invoices.csv');
      const runs = await runsOf(env);
      expect(runs.at(-1)).toMatchObject({ status: 'failed', error: expect.stringContaining('503') });
      await healedPass(sandbox, env);
    } finally {
      await sandbox.admin('PUT', '/faults', { errorRate: 0, latencyMs: 0 });
      await env.cleanup();
    }
  });

  it('when Redis (the shared rate limiter) dies mid-pass, then exit 1 names Redis, the files stay, and the pass after its restart heals', async () => {
    const redis = await startPrivateRedis();
    const env = await fresh();
    env.env.REDIS_URL = redis.url;
    try {
      await sandbox.admin('PUT', '/faults', { latencyMs: 20 });
      const run = startSyncOnce(env);
      await untilMidPass(sandbox, run, (stats) => stats.accounts >= 3);
      await redis.kill();
      // A pass that does not stop leaves its log in the test's output, not just a timeout.
      const stuck = setTimeout(
        () => console.error(`still running 60 s after Redis died:\n${run.stderr().slice(-4000)}`),
        60_000,
      );
      const [code] = await once(run.child, 'exit');
      clearTimeout(stuck);
      const stderr = run.stderr();
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      expect(code, stderr).toBe(1);
      expect(stderr).toMatch(/could not run: Redis is unavailable \(REDIS_UNAVAILABLE: /);
      expect(stderr).not.toMatch(/Unhandled error event|Unhandled 'error' event/);
      expect(filesOf(env).rejected).toEqual([]);
      expect(filesOf(env).processing).toEqual([]);
      expect(filesOf(env).waiting).toContain('invoices.csv');
      expect((await runsOf(env)).at(-1)).toMatchObject({
        status: 'failed',
        error: expect.stringContaining('Redis'),
      });
      await redis.restart();
      await healedPass(sandbox, env);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await redis.kill();
      await env.cleanup();
    }
  });

  it("when the state DB's connections are terminated mid-pass, then the interrupted calls run again on new connections and the pass finishes", async () => {
    const env = await fresh();
    try {
      await sandbox.admin('PUT', '/faults', { latencyMs: 15 });
      const run = startSyncOnce(env);
      await untilMidPass(sandbox, run, (stats) => stats.accounts >= 3);
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      try {
        // What a restart or a failover does to this process's sessions (and only to them).
        const { rows } = await admin.query(
          'select pg_terminate_backend(pid) as killed from pg_stat_activity where application_name = $1',
          [env.env.DATABASE_SCHEMA],
        );
        expect(rows.length).toBeGreaterThan(0);
      } finally {
        await admin.end();
      }
      const [code] = await once(run.child, 'exit');
      const stderr = run.stderr();
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      // A restart or failover of a few seconds costs nothing: no unhandled error, no stop.
      expect(code, stderr).toBe(0);
      expect(stderr).not.toMatch(/Unhandled 'error' event|Unhandled error event/);
      expect(filesOf(env).rejected).toEqual([]);
      await healedPass(sandbox, env);
    } finally {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env.cleanup();
    }
  });
});
