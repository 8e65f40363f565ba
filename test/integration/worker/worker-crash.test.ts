import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  eventually,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';

/** Two workers; each request takes 100 ms, one at a time: the pass of 20 accounts + 10 invoices lasts 3 s+. */
describe('worker: a worker killed during a job', () => {
  let sandbox: TestSandbox;
  let env: WorkerEnv;
  let connection: Redis;
  let queue: Queue;
  let workers: WorkerProcess[] = [];

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    await sandbox.admin('PUT', '/faults', { latencyMs: 100 });
    env = await workerEnv(sandbox, { label: 'crash' });
    const config = env.writeConfig({ apiConcurrency: 1 });
    workers = await Promise.all([startWorker('A', config, env.env), startWorker('B', config, env.env)]);
    connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue('sync', { connection, prefix: env.prefix });
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop('SIGKILL')));
    await queue?.close();
    connection?.disconnect();
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when the worker running a pass gets SIGKILL, then the other one finishes it with no duplicate', async () => {
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
    // The pass that takes the files: the first one that creates accounts.
    await eventually(
      () => sandbox.admin('GET', '/stats'),
      (s) => s.accounts >= 3,
      { what: 'the pass under way' },
    );
    const running = await Promise.any(
      workers.map((w) =>
        w.waitForLog(
          (l) => l.event === 'job.started' && !w.linesOf('job.done').some((d) => d.jobId === l.jobId),
        ),
      ),
    );
    const victim = workers.find((w) => w.linesOf('job.started').some((l) => l.jobId === running.jobId))!;
    const survivor = workers.find((w) => w !== victim)!;

    victim.child.kill('SIGKILL');
    expect((await victim.exited).signal).toBe('SIGKILL');

    const done = await survivor.waitForLog(
      (l) => l.event === 'job.done' && l.jobId === running.jobId,
      30_000,
    );
    expect(survivor.linesOf('job.started').find((l) => l.jobId === running.jobId)).toMatchObject({
      recovered: true,
    });
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 20, invoices: 10 });
    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, first: 100 },
    });
    const keys: string[] = accounts.body.nodes.map((a: any) => a.source.sourceId);
    expect(keys).toHaveLength(20);
    expect(new Set(keys).size).toBe(20);
    const invoices = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, first: 100 },
    });
    expect(new Set(invoices.body.nodes.map((d: any) => d.sourceId)).size).toBe(invoices.body.nodes.length);

    // The resumed pass put the half-done file back and finished it: nothing is left claimed.
    const putBack = survivor.logs.filter((l) => l.level === 40 && l.outcome === 'recovered');
    expect(putBack).not.toHaveLength(0);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
    const job = await queue.getJob(String(running.jobId));
    expect(job?.finishedOn).toBeDefined();
    expect(await job?.getState()).toBe('completed');
    expect(done.runs).toBeDefined();
  });
});
