import { appendFileSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { TEST_DATABASE_URL } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { type TcpGate, tcpGate } from '../../support/tcp-gate.js';
import {
  eventually,
  type PrivateRedis,
  startPrivateRedis,
  startWorker,
  type WorkerEnv,
  type WorkerProcess,
  workerEnv,
} from '../../support/worker-process.js';
import { startAlertReceiver } from './alerts-receiver.js';

/**
 * The worker started while one of its dependencies is down (Redis, the state DB, the API), each
 * behind something the test starts or opens later: a private redis-server killed before the start,
 * a TCP gate in front of the machine's Postgres, a gate in front of the sandbox. The process must
 * serve `/healthz` at once, say in `/readyz` what is missing, then, once the dependency is up, run
 * the pass that syncs a drop, without a restart.
 */
describe('worker: a dependency down at start', () => {
  let sandbox: TestSandbox | undefined;
  let env: WorkerEnv | undefined;
  let worker: WorkerProcess | undefined;
  let redis: PrivateRedis | undefined;
  let gate: TcpGate | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];

  afterEach(async () => {
    await worker?.stop('SIGKILL');
    await gate?.shut();
    await env?.cleanup();
    await redis?.kill();
    await sandbox?.close();
    for (const cleanup of cleanups.splice(0)) await cleanup();
    worker = env = redis = gate = sandbox = undefined;
  });

  const get = async (path: string) => {
    const url = worker!.logs.find((l) => l.event === 'worker.serving')!.url as string;
    const response = await fetch(`${url}${path}`);
    return { status: response.status, body: (await response.json()) as any };
  };

  /** The drop synced by the worker that has run since the start (never restarted, still running). */
  const dropSynced = async () => {
    dropCsv(
      env!.dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    await eventually(
      () => sandbox!.admin('GET', '/stats'),
      (s) => s.accounts === 3,
      { timeoutMs: 30_000, what: 'the drop synced' },
    );
    expect(worker!.child.exitCode).toBeNull();
    expect(worker!.linesOf('worker.serving')).toHaveLength(1);
    // The outage was waited through, never an unhandled error (ioredis prints those raw).
    expect(worker!.logs.filter((l) => l.raw && /unhandled/i.test(String(l.msg)))).toEqual([]);
  };

  /**
   * The worker's config with an alert target (a local receiver) and `notReadyMinutes` of 3 s:
   * the wait is told from the worker's process, whatever is missing (Redis included).
   */
  const alertedConfig = async () => {
    const receiver = await startAlertReceiver();
    cleanups.push(() => receiver.close());
    const config = env!.writeConfig();
    appendFileSync(
      config,
      [
        'alerts:',
        '  notReadyMinutes: 0.05',
        '  targets:',
        '    - id: ops',
        '      type: webhook',
        '      urlEnv: OPS_ALERTS_URL',
        '',
      ].join('\n'),
    );
    env!.env.OPS_ALERTS_URL = receiver.url('/ops');
    return { config, receiver };
  };

  /** The first `run.failed` with no source the receiver got: the worker's wait, told. */
  const notReadyAlert = async (receiver: Awaited<ReturnType<typeof startAlertReceiver>>) => {
    const [alert] = await eventually(
      async () => receiver.delivered('/ops').filter((b) => b.type === 'run.failed' && b.sourceId === null),
      (alerts) => alerts.length > 0,
      { timeoutMs: 15_000, what: 'the not-ready alert' },
    );
    expect(alert.details.errorCode).toBe('WORKER_NOT_READY');
    return alert;
  };

  /** `/readyz` answers 200, every check ok. */
  const becomesReady = () =>
    eventually(
      () => get('/readyz'),
      (r) => r.status === 200,
      { timeoutMs: 30_000, what: 'ready' },
    );

  it('when Redis is down at start, then /healthz answers, /readyz names redis, the lasting wait is alerted, and once Redis is up the drop is synced without a restart', async () => {
    sandbox = await startTestSandbox();
    redis = await startPrivateRedis();
    env = await workerEnv(sandbox, { label: 'redis-down', redisUrl: redis.url });
    await redis.kill();

    const { config, receiver } = await alertedConfig();
    worker = await startWorker('W', config, env.env, { until: 'worker.serving' });
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const waiting = await worker.waitForLog((l) => l.event === 'worker.waiting' && l.dependency === 'redis');
    expect(String(waiting.err)).toMatch(/cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+.*ECONNREFUSED/);
    const notReady = await get('/readyz');
    expect(notReady).toMatchObject({
      status: 503,
      body: { status: 'not ready', checks: { redis: 'failed' } },
    });
    // The pages say what it waits for, never where or why (public).
    expect(await get('/api/status')).toMatchObject({
      status: 503,
      body: { code: 'DASHBOARD_STARTING', waitingFor: expect.arrayContaining(['redis']) },
    });
    expect(JSON.stringify((await get('/readyz')).body)).not.toContain(String(redis.port));
    expect(worker.linesOf('worker.started')).toEqual([]);
    // Told from the worker's process: Redis, the alerts' queue, is what it waits for.
    expect((await notReadyAlert(receiver)).summary).toMatch(
      /waited \d+ s for redis \(cannot reach Redis at /,
    );

    await redis.restart();
    await worker.waitForLog('worker.started');
    await dropSynced();
    expect((await becomesReady()).body.checks).toEqual({ database: 'ok', redis: 'ok', api: 'ok' });
  }, 60_000);

  it('when the state DB is down at start, then /healthz answers, /readyz names the database, and once it is up the drop is synced without a restart', async () => {
    sandbox = await startTestSandbox();
    env = await workerEnv(sandbox, { label: 'db-down' });
    const url = new URL(TEST_DATABASE_URL);
    gate = await tcpGate({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(gate.port);

    worker = await startWorker(
      'W',
      env.writeConfig(),
      { ...env.env, DATABASE_URL: url.toString() },
      { until: 'worker.serving' },
    );
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    const waiting = await worker.waitForLog(
      (l) => l.event === 'worker.waiting' && l.dependency === 'database',
    );
    expect(String(waiting.err)).toMatch(/cannot open the state DB: .*ECONNREFUSED/);
    expect(await get('/readyz')).toMatchObject({
      status: 503,
      body: { status: 'not ready', checks: { database: 'failed', redis: 'ok', api: 'pending' } },
    });

    await gate.open();
    await worker.waitForLog('worker.started');
    await dropSynced();
    await becomesReady();
  }, 60_000);

  it('when the API is unreachable at start and no organization is configured, then /readyz names the api, the lasting wait is alerted, and once the API is up the passes sync into the organization its token sees', async () => {
    sandbox = await startTestSandbox();
    const api = new URL(sandbox.baseUrl);
    gate = await tcpGate({ host: api.hostname, port: Number(api.port) });
    env = await workerEnv(sandbox, { label: 'api-down' });
    const { config, receiver } = await alertedConfig();

    worker = await startWorker(
      'W',
      config,
      {
        ...env.env,
        RECEIVABLES_BASE_URL: `http://127.0.0.1:${gate.port}`,
        RECEIVABLES_ORGANIZATION_ID: '',
      },
      { until: 'worker.serving' },
    );
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    // Redis and the state DB answer: the worker runs, its passes fail and are retried meanwhile.
    await worker.waitForLog('worker.started');
    await eventually(
      () => get('/readyz'),
      (r) => r.body.checks?.api === 'failed',
      { timeoutMs: 15_000, what: '/readyz naming the api' },
    );
    expect((await get('/readyz')).body).toEqual({
      status: 'not ready',
      checks: { database: 'ok', redis: 'ok', api: 'failed' },
    });
    const [alert] = await eventually(
      async () => receiver.delivered('/ops').filter((b) => b.type === 'run.failed' && b.sourceId === null),
      (alerts) => alerts.length > 0,
      { timeoutMs: 15_000, what: 'the not-ready alert' },
    );
    expect(alert.summary).toMatch(
      /^the sync could not start: \(WORKER_NOT_READY\) the worker has waited \d+ s for api/,
    );

    await gate.open();
    await dropSynced();
    await becomesReady();
    // The organization the token sees, found once the API answered (none is configured).
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      const organizations = await eventually(
        async () =>
          (
            await client.query(
              `select organization_id from "${env!.schema}".runs where source_id = 'erp-csv' and status = 'succeeded'`,
            )
          ).rows.map((r) => r.organization_id as string),
        (found) => found.length > 0,
        { timeoutMs: 10_000, what: 'a succeeded run' },
      );
      expect(new Set(organizations)).toEqual(new Set([sandbox.organizationId]));
    } finally {
      await client.end();
    }
  }, 90_000);
});
