import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  eventually,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';

/** Each request takes 100 ms and the client sends one at a time: a pass of N accounts lasts N/10 s. */
describe('worker: shutdown on SIGTERM', () => {
  let sandbox: TestSandbox;
  let env: WorkerEnv;
  let connection: Redis;
  let queue: Queue;
  const started: WorkerProcess[] = [];
  const accounts = () => sandbox.admin('GET', '/stats').then((s) => s.accounts as number);

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    await sandbox.admin('PUT', '/faults', { latencyMs: 100 });
    env = await workerEnv(sandbox, { label: 'shutdown' });
    connection = new Redis(env.redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue('sync', { connection, prefix: env.prefix });
  });
  afterAll(async () => {
    await Promise.all(started.map((w) => w.stop('SIGKILL')));
    await queue?.close();
    connection?.disconnect();
    await env?.cleanup();
    await sandbox?.close();
  });

  it('when SIGTERM arrives during a job, then the job finishes and the worker exits 0', async () => {
    const worker = await startWorker(
      'graceful',
      env.writeConfig({ name: 'graceful', apiConcurrency: 1 }),
      env.env,
    );
    started.push(worker);
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 15).map((i) => accountRow(i)),
    );
    const job = await worker.waitForLog('job.started');
    await eventually(accounts, (n) => n >= 2, { what: 'the pass under way' });

    worker.child.kill('SIGTERM');
    const exit = await worker.exited;

    expect(exit.code).toBe(0);
    expect(await accounts()).toBe(15);
    // Stopped once, with no job left running.
    expect(worker.logs.filter((l) => typeof l.jobsLeft === 'boolean')).toEqual([
      expect.objectContaining({ level: 30, jobsLeft: false }),
    ]);
    expect(worker.linesOf('job.done').map((l) => l.jobId)).toContain(job.jobId);
    expect(await queue.getJobState(String(job.jobId))).toBe('completed');
    expect(await queue.getActiveCount()).toBe(0);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
  });

  it('when a job outlasts the shutdown limit, then the worker exits 0 at the limit and the next worker resumes the job without duplicates', async () => {
    const quick = await startWorker(
      'quick',
      env.writeConfig({ name: 'quick', apiConcurrency: 1, queue: { shutdownSeconds: 0.5 } }),
      env.env,
    );
    started.push(quick);
    const before = await accounts();
    dropCsv(
      env.dropDir,
      'accounts-2.csv',
      ACCOUNT_HEADER,
      range(101, 130).map((i) => accountRow(i)),
    );
    const job = await quick.waitForLog('job.started');
    await eventually(accounts, (n) => n >= before + 2, { what: 'the pass under way' });

    const signalled = Date.now();
    quick.child.kill('SIGTERM');
    const exit = await quick.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(5000);
    // Warned once that the job was left at the limit, and stopped saying so.
    expect(quick.logs.filter((l) => l.level === 40 && l.limitSeconds !== undefined)).toEqual([
      expect.objectContaining({ limitSeconds: 0.5 }),
    ]);
    expect(quick.logs.filter((l) => typeof l.jobsLeft === 'boolean')).toEqual([
      expect.objectContaining({ jobsLeft: true }),
    ]);
    expect(await accounts()).toBeLessThan(before + 30);

    // The job's lock expires (2 s); the next worker's stalled check gives the job back to the queue.
    const next = await startWorker('next', env.writeConfig({ name: 'next' }), env.env);
    started.push(next);
    await next.waitForLog((l) => l.event === 'job.done' && l.jobId === job.jobId, 30_000);
    expect(await accounts()).toBe(before + 30);
    const listed = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, first: 100 },
    });
    const keys: string[] = listed.body.nodes.map((a: any) => a.source.sourceId);
    expect(keys.length).toBe(before + 30);
    expect(new Set(keys).size).toBe(before + 30);
    expect(readdirSync(join(env.dropDir, '.processing'))).toEqual([]);
    expect(readdirSync(env.dropDir).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });
});
