import pg from 'pg';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
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
  type LogLine,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';

interface RunLine {
  id: string;
  status: string;
  error: string | null;
}

const PROCESS_GONE = 'its process ended before the pass finished (killed or crashed)';

/** Each request takes 100 ms, one at a time: a pass of 20 accounts + 10 invoices lasts 3 s+. */
describe('worker: a run never stays running', () => {
  let sandbox: TestSandbox;
  let env: WorkerEnv;
  let db: pg.Client;
  const started: WorkerProcess[] = [];
  const runs = async (): Promise<RunLine[]> =>
    (await db.query<RunLine>(`select id::text as id, status, error from "${env.schema}".runs order by id`))
      .rows;
  const runningPass = async () => {
    const [run] = await eventually(
      async () => (await runs()).filter((r) => r.status === 'running'),
      (r) => r.length === 1,
      { what: 'one run in progress' },
    );
    return run!;
  };
  const accounts = () => sandbox.admin('GET', '/stats').then((s) => s.accounts as number);

  beforeEach(async () => {
    sandbox = await startTestSandbox();
    await sandbox.admin('PUT', '/faults', { latencyMs: 100 });
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((w) => w.stop('SIGKILL')));
    await db?.end();
    await env?.cleanup();
    await sandbox?.close();
  });
  afterAll(async () => {
    await Promise.all(started.map((w) => w.stop('SIGKILL')));
  });

  async function setUp(label: string) {
    env = await workerEnv(sandbox, { label });
    db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
  }

  function dropPass() {
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 20).map((i) => accountRow(i)),
    );
    dropCsv(
      env.dropDir,
      'invoices.csv',
      INVOICE_HEADER,
      range(1, 10).map((i) => invoiceRow(i, i)),
    );
  }

  it('when the worker running a pass gets SIGKILL, then another worker resumes the job within lockSeconds + stalledCheckSeconds, closes the dead run as interrupted, and no run stays running', async () => {
    await setUp('runs-kill');
    // lockSeconds = stalledCheckSeconds: the case where BullMQ's shared stalled-check key could
    // delay the resumption to 3 × stalledCheckSeconds (see stalledCheckIntervalMs).
    const lockSeconds = 2;
    const stalledCheckSeconds = 2;
    const config = env.writeConfig({ apiConcurrency: 1, queue: { lockSeconds, stalledCheckSeconds } });
    const workers = await Promise.all([startWorker('A', config, env.env), startWorker('B', config, env.env)]);
    started.push(...workers);
    dropPass();
    await eventually(accounts, (n) => n >= 3, { what: 'the pass under way' });
    const dead = await runningPass();
    const passJob = (w: WorkerProcess) =>
      w.linesOf('job.started').find((l) => !w.linesOf('job.done').some((d) => d.jobId === l.jobId));
    const victim = workers.find((w) => passJob(w) !== undefined)!;
    const survivor = workers.find((w) => w !== victim)!;
    const job = passJob(victim)!;

    const killedAt = Date.now();
    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const resumed: LogLine = await survivor.waitForLog(
      (l) => l.event === 'job.started' && l.jobId === job.jobId && l.recovered === true,
      30_000,
    );
    const resumedAfterMs = (resumed.time as number) - killedAt;
    // The bound of docs/worker.md, with a margin for process start-up and scheduling, not a timing test.
    console.info(`job resumed ${resumedAfterMs} ms after its worker was killed`);
    expect(resumedAfterMs).toBeLessThan((lockSeconds + stalledCheckSeconds) * 1000 + 1500);

    await survivor.waitForLog((l) => l.event === 'job.done' && l.jobId === job.jobId, 30_000);
    expect(await accounts()).toBe(20);
    // The resumed pass closed the dead run before it started its own.
    expect((await runs()).find((r) => r.id === dead.id)).toEqual({
      id: dead.id,
      status: 'interrupted',
      error: PROCESS_GONE,
    });

    // Stopped gracefully (a tick's pass may be under way: it finishes), nothing is left running.
    survivor.child.kill('SIGTERM');
    expect((await survivor.exited).code).toBe(0);
    const after = await runs();
    expect(after.filter((r) => r.status === 'running')).toEqual([]);
    expect(after.filter((r) => r.status === 'interrupted')).toEqual([
      { id: dead.id, status: 'interrupted', error: PROCESS_GONE },
    ]);
  });

  it('when SIGTERM comes mid-pass and the job outlasts the shutdown limit, then its run is closed as interrupted ("shut down") before the exit, and the next worker finishes the work', async () => {
    await setUp('runs-term');
    const quick = await startWorker(
      'quick',
      env.writeConfig({ name: 'quick', apiConcurrency: 1, queue: { shutdownSeconds: 0.5 } }),
      env.env,
    );
    started.push(quick);
    dropPass();
    const job = await quick.waitForLog('job.started');
    await eventually(accounts, (n) => n >= 2, { what: 'the pass under way' });
    const cut = await runningPass();

    quick.child.kill('SIGTERM');
    expect((await quick.exited).code).toBe(0);
    expect(quick.linesOf('runs.interrupted')).toEqual([expect.objectContaining({ runs: [cut.id] })]);
    expect((await runs()).find((r) => r.id === cut.id)).toEqual({
      id: cut.id,
      status: 'interrupted',
      error: 'shut down',
    });

    const next = await startWorker('next', env.writeConfig({ name: 'next' }), env.env);
    started.push(next);
    await next.waitForLog((l) => l.event === 'job.done' && l.jobId === job.jobId, 30_000);
    expect(await accounts()).toBe(20);
    next.child.kill('SIGTERM');
    expect((await next.exited).code).toBe(0);
    expect((await runs()).filter((r) => r.status === 'running')).toEqual([]);
  });
});
