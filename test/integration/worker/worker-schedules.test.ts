import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../../support/drop-data.js';
import { TEST_DATABASE_URL } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  eventually,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';

/** Two worker processes, one schedule every 2 s, one drop folder. */
describe('worker: schedules and drop-folder polling with two processes', () => {
  let sandbox: TestSandbox;
  let env: WorkerEnv;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    env = await workerEnv(sandbox, { label: 'schedules' });
    const config = env.writeConfig();
    workers = await Promise.all([startWorker('A', config, env.env), startWorker('B', config, env.env)]);
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when the schedule fires in both processes, then each tick is queued once and runs once', async () => {
    // Three ticks seen by both processes.
    const both = () => {
      const ticksOf = (w: WorkerProcess) => new Set(w.linesOf('schedule.fired').map((l) => String(l.tick)));
      const [a, b] = workers.map(ticksOf) as [Set<string>, Set<string>];
      return [...a].filter((t) => b.has(t));
    };
    await eventually(
      async () => both(),
      (ticks) => ticks.length >= 3,
      { timeoutMs: 15_000, what: 'three common ticks' },
    );
    await Promise.all(workers.map((w) => w.waitForLog('job.done')));

    const started = workers.flatMap((w) => w.linesOf('job.started'));
    const done = workers.flatMap((w) => w.linesOf('job.done'));
    const perJob = new Map<string, number>();
    for (const line of started) perJob.set(String(line.jobId), (perJob.get(String(line.jobId)) ?? 0) + 1);
    expect([...perJob.values()].every((n) => n === 1)).toBe(true);
    for (const jobId of perJob.keys()) expect(jobId).toMatch(/^source-sync\.erp-csv\.t\d+$/);
    // Every pass is one run in the state DB, with the schedule as its trigger. Ticks keep coming
    // while the test reads, so compare at a quiet moment between two ticks: the runs and the
    // job.started lines agree then, and a duplicated run would keep them apart for good.
    expect(await scheduleRuns(env.schema)).toBeGreaterThanOrEqual(done.length);
    await eventually(
      async () => ({
        runs: await scheduleRuns(env.schema),
        started: workers.flatMap((w) => w.linesOf('job.started')).length,
      }),
      ({ runs, started: s }) => runs === s,
      { timeoutMs: 10_000, what: 'one run per started job' },
    );
  });

  it('when a CSV is dropped, then it is synced within one poll, once', async () => {
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 4).map((i) => accountRow(i)),
    );
    dropCsv(
      env.dropDir,
      'invoices.csv',
      INVOICE_HEADER,
      range(1, 3).map((i) => invoiceRow(i, i)),
    );
    const dropped = Date.now();
    await eventually(
      () => sandbox.admin('GET', '/stats'),
      (s) => s.accounts === 4 && s.invoices === 3,
      { timeoutMs: 15_000, what: 'the drop synced' },
    );
    // One poll every 2 s; the pass itself takes well under a second against the sandbox.
    expect(Date.now() - dropped).toBeLessThan(2000 + 2500);
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
    expect(existsSync(join(env.dropDir, 'archive'))).toBe(true);

    // Later passes find nothing new: still one account per row.
    await Promise.all(
      workers.map((w) => w.waitForLog((l) => l.event === 'job.done' && Number(l.time) > dropped + 2500)),
    );
    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, first: 50 },
    });
    const keys = accounts.body.nodes.map((a: any) => a.source?.sourceId).sort();
    expect(keys).toEqual(['C-1', 'C-2', 'C-3', 'C-4']);
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 4, invoices: 3 });
  });
});

async function scheduleRuns(schema: string): Promise<number> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const result = await client.query(
      `select count(*)::int as n from "${schema}".runs where trigger = 'schedule'`,
    );
    return result.rows[0].n as number;
  } finally {
    await client.end();
  }
}
