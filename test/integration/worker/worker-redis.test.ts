import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  eventually,
  type PrivateRedis,
  startPrivateRedis,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';

/**
 * A private redis-server (the machine's shared one must not be restarted), started with an
 * eviction policy the worker must warn about, then killed and started again on the same port.
 */
describe('worker: its Redis', () => {
  let sandbox: TestSandbox;
  let redis: PrivateRedis;
  let env: WorkerEnv;
  let worker: WorkerProcess;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    redis = await startPrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
    env = await workerEnv(sandbox, { label: 'redis', redisUrl: redis.url });
    worker = await startWorker('W', env.writeConfig(), env.env);
  });
  afterAll(async () => {
    await worker?.stop('SIGKILL');
    await env?.cleanup();
    await redis?.kill();
    await sandbox?.close();
  });

  it('when Redis may evict keys, then the worker warns at start', () => {
    const warnings = worker.logs.filter((l) => l.level === 40 && l.maxmemoryPolicy !== undefined);
    expect(warnings).toEqual([expect.objectContaining({ maxmemoryPolicy: 'allkeys-lru' })]);
  });

  it('when Redis restarts, then the worker reconnects and syncs the next drop', async () => {
    await worker.waitForLog('job.done');
    await redis.kill();
    await worker.waitForLog('redis.lost');
    await redis.restart();
    await worker.waitForLog('redis.back');

    const back = Date.now();
    dropCsv(
      env.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    await eventually(
      () => sandbox.admin('GET', '/stats'),
      (s) => s.accounts === 3,
      { timeoutMs: 20_000, what: 'the drop synced' },
    );
    await worker.waitForLog((l) => l.event === 'job.done' && Number(l.time) > back);
    expect(worker.child.exitCode).toBeNull();

    // It still stops cleanly.
    expect((await worker.stop('SIGTERM')).code).toBe(0);
  });
});
