import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DelayedError } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncRuntime, type SyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import { type LoadedConfig, loadConfig } from '../../../src/config/load.js';
import { SourceLock } from '../../../src/jobs/source-lock.js';
import { createSyncProcessor, type ProcessedJob } from '../../../src/jobs/sync-processor.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { RUN_PROCESS_GONE, RunsRepository } from '../../../src/state/runs.js';
import { SourcePasses } from '../../../src/state/source-passes.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  eventually,
  type LogLine,
  type PrivateRedis,
  startPrivateRedis,
} from '../../support/worker-process.js';

/**
 * One pass per source when Redis loses the source lock (issue 25, item 3), in this process with
 * real parts: the worker's processor over the real sync (CSV drop folder, the sandbox, Postgres),
 * its source lock on a private `redis-server` that is killed and started again empty mid-pass
 * (the machine's Redis must not be restarted), and "other processes" as other pools on the state DB.
 */
describe('worker: the source lock lost with a Redis restart', () => {
  const schema = uniqueSchema('pass_fence');
  const prefix = `t-pass-fence-${randomBytes(4).toString('hex')}`;
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  const quiet = pino({ level: 'silent' });
  const lockKey = `${prefix}:source-lock:erp-csv`;
  const passKey = `${prefix}:source-pass:erp-csv`;
  let dir: string;
  let dropDir: string;
  let sandbox: TestSandbox;
  let redis: PrivateRedis;
  let lockRedis: Redis;
  let admin: Redis;
  let runtime: SyncRuntime;
  let other: StateDatabase;
  let processor: ReturnType<typeof createSyncProcessor>;
  const delays: number[] = [];

  const jobOf = (id: string): ProcessedJob =>
    ({
      id,
      name: 'source-sync',
      data: { type: 'source-sync', sourceId: 'erp-csv', trigger: 'manual' },
      attemptsMade: 0,
      stalledCounter: 0,
      moveToDelayed: async (timestamp: number) => {
        delays.push(timestamp);
      },
    }) as unknown as ProcessedJob;
  const stats = (): Promise<{ accounts: number; invoices: number }> => sandbox.admin('GET', '/stats');
  const runs = () =>
    runtime.database.db
      .selectFrom('runs')
      .select(['id', 'status', 'error'])
      .where('source_id', '=', 'erp-csv')
      .orderBy('id')
      .execute();
  const csvIn = (folder: string) =>
    existsSync(folder)
      ? readdirSync(folder)
          .filter((f) => f.endsWith('.csv'))
          .sort()
      : [];
  /** Kills the private Redis (everything in it is lost) and starts it again, empty. */
  const restartRedis = async () => {
    await redis.kill();
    await redis.restart();
  };
  const sourceKeys = (from: number, to: number, kind: 'accounts' | 'invoices') =>
    sandbox
      // Without `first`, the sandbox lists them all.
      .call('GET', `/${kind}`, { query: { organizationId: sandbox.organizationId } })
      .then((r) =>
        (r.body.nodes as any[])
          .map((n) => (kind === 'accounts' ? n.source.sourceId : n.sourceId) as string)
          .filter((k) => {
            const n = Number(k.split('-')[1]);
            return n >= from && n <= to;
          }),
      );

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-pass-fence-'));
    dropDir = join(dir, 'drop');
    // A budget the 1,100-row pass never meets (the default is 300 a minute).
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    redis = await startPrivateRedis();
    // Commands wait through the restart (as the worker's queue connection does).
    lockRedis = new Redis(redis.url, { maxRetriesPerRequest: null });
    admin = new Redis(redis.url, { maxRetriesPerRequest: null });
    const file = join(dir, 'config.yaml');
    writeFileSync(
      file,
      `api:\n  concurrency: 1\nqueue:\n  prefix: ${prefix}\nsources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${dropDir}\n    stableSeconds: 0\n`,
    );
    // The runtime's rate limiter stays in memory: only the source lock lives in the Redis restarted.
    const loaded: LoadedConfig = loadConfig({
      file,
      env: {
        ...apiEnvOf(sandbox),
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        LOG_LEVEL: 'silent',
      },
    });
    other = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, schema });
    runtime = await openSyncRuntime(loaded, quiet);
    processor = createSyncProcessor({
      service: syncServiceOf(runtime, loaded.config.sources),
      sources: loaded.config.sources,
      // Renewed every 300 ms.
      lock: new SourceLock({ redis: lockRedis, prefix, ttlMs: 900, logger }),
      passes: new SourcePasses(runtime.database.db),
      logger,
      isPaused: async () => false,
      sourceBusyRetryMs: 100,
    });
  }, 60_000);

  afterAll(async () => {
    await runtime?.close();
    await new RunsRepository(other.db).releaseRunLocks();
    await other?.close();
    lockRedis?.disconnect();
    admin?.disconnect();
    await redis?.kill();
    await sandbox?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  it('when Redis restarts empty mid-pass and no other job took the lock, then the pass takes it back and finishes', async () => {
    await sandbox.admin('PUT', '/faults', { latencyMs: 100 });
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 30).map((i) => accountRow(i)),
    );
    const job = processor(jobOf('restart-1'));
    job.catch(() => undefined); // awaited below; a failed expectation before must not leave it unhandled
    await eventually(stats, (s) => s.accounts >= 3, { what: 'the pass under way' });
    await restartRedis();

    const result = await job;
    expect(lines.some((l) => l.event === 'source-lock.retaken')).toBe(true);
    expect(result.runs).toEqual([expect.objectContaining({ failed: 0, abandoned: 0 })]);
    expect(result.runs[0]!.counts.accounts.created).toBe(30);
    // Released at the end, the pass marker it took back with it too (a normal end).
    expect(await admin.get(lockKey)).toBeNull();
    expect(await admin.get(passKey)).toBeNull();
    expect(await sourceKeys(1, 30, 'accounts')).toHaveLength(30);
    expect(csvIn(dropDir)).toEqual([]);
  }, 30_000);

  it('when another job holds the lock after the restart, then the pass stops before going on, its file back in the drop folder and its run failed; the next job syncs everything once', async () => {
    await sandbox.admin('PUT', '/faults', { latencyMs: 100 });
    const before = await stats();
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(101, 130).map((i) => accountRow(i)),
    );
    dropCsv(
      dropDir,
      'invoices.csv',
      INVOICE_HEADER,
      range(101, 110).map((i) => invoiceRow(i, i)),
    );
    const job = processor(jobOf('lost-1'));
    const stopped = job.then(
      () => null,
      (error: unknown) => error,
    );
    await eventually(stats, (s) => s.accounts >= before.accounts + 3, { what: 'the pass under way' });
    await restartRedis();
    // A job of another worker took the lock Redis lost.
    await admin.set(lockKey, 'another-job', 'PX', 60_000);

    expect(await stopped).toMatchObject({ code: 'SOURCE_LOCK_LOST' });
    expect(lines.some((l) => l.event === 'source-lock.lost' && l.holder === 'another-job')).toBe(true);
    // Stopped before completing its file: put back, the invoices' file never claimed.
    expect(csvIn(dropDir)).toEqual(['accounts.csv', 'invoices.csv']);
    expect(csvIn(join(dropDir, '.processing'))).toEqual([]);
    expect((await stats()).invoices).toBe(before.invoices);
    const run = (await runs()).at(-1)!;
    expect(run.status).toBe('failed');
    expect(run.error).toMatch(/lost to another job \(another-job\).*stopped before its next batch/);
    // Its lock is left to the other job.
    expect(await admin.get(lockKey)).toBe('another-job');

    await admin.del(lockKey);
    const next = await processor(jobOf('lost-2'));
    expect(next.runs[0]!.failed).toBe(0);
    expect(next.runs[0]!.counts.invoices.created).toBe(10);
    expect(next.runs[0]!.counts.accounts.created).toBe(0);
    const accounts = await sourceKeys(101, 130, 'accounts');
    expect(accounts).toHaveLength(30);
    expect(new Set(accounts).size).toBe(30);
    expect(await sourceKeys(101, 110, 'invoices')).toHaveLength(10);
    expect(csvIn(dropDir)).toEqual([]);
    expect(csvIn(join(dropDir, '.processing'))).toEqual([]);
  }, 40_000);

  it('when a later pass of the source starts, then the running pass stops between two batches, its file back, and the next pass syncs the rest once', async () => {
    // 1,100 rows: three batches of at most 500; each write takes 5 ms more, one at a time.
    await sandbox.admin('PUT', '/faults', { latencyMs: 5 });
    const before = await stats();
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1001, 2100).map((i) => accountRow(i)),
    );
    const job = processor(jobOf('superseded-1'));
    const stopped = job.then(
      () => null,
      (error: unknown) => error,
    );
    await eventually(stats, (s) => s.accounts >= before.accounts + 10, { what: 'the first batch under way' });
    // Another process starts a pass of the source (one that did not meet the lock: its run is the token).
    const runsThere = new RunsRepository(other.db);
    runsThere.holdRunLocks();
    const later = await runsThere.start('erp-csv', 'schedule', false);

    expect(await stopped).toMatchObject({ code: 'SOURCE_PASS_SUPERSEDED' });
    // The first batch went through, the second was never written.
    expect((await stats()).accounts - before.accounts).toBe(500);
    expect(csvIn(dropDir)).toEqual(['accounts.csv']);
    const stoppedRun = (await runs()).find((r) => r.error?.includes(`started (run ${later})`));
    expect(stoppedRun?.status).toBe('failed');
    await runsThere.finish(later, 'succeeded', {});

    await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
    const next = await processor(jobOf('superseded-2'));
    expect(next.runs[0]!.counts.accounts).toMatchObject({ created: 600, unchanged: 500, failed: 0 });
    const keys = await sourceKeys(1001, 2100, 'accounts');
    expect(keys).toHaveLength(1100);
    expect(new Set(keys).size).toBe(1100);
    expect(csvIn(dropDir)).toEqual([]);
  }, 60_000);

  it('when a pass of the source is live in the state DB though its lock is gone, then a job waits without taking the lock, and runs once that pass ended', async () => {
    const runsThere = new RunsRepository(other.db);
    runsThere.holdRunLocks();
    const live = await runsThere.start('erp-csv', 'schedule', false);
    await admin.del(lockKey);
    delays.length = 0;

    await expect(processor(jobOf('waits-1'))).rejects.toBeInstanceOf(DelayedError);
    expect(delays).toHaveLength(1);
    expect(await admin.get(lockKey)).toBeNull();
    expect(await admin.get(passKey)).toBeNull();
    expect(lines.some((l) => l.event === 'job.waiting' && (l.runs as string[]).includes(live))).toBe(true);

    await runsThere.finish(live, 'succeeded', {});
    const result = await processor(jobOf('waits-1'));
    expect(result.runs).toHaveLength(1);
    expect(delays).toHaveLength(1);
  }, 30_000);

  it('when the pass in the state DB is dead (its process gone), then the job runs and closes it as interrupted', async () => {
    const gone = await openStateDatabase({
      databaseUrl: TEST_DATABASE_URL,
      dataDir: dir,
      schema,
      migrate: false,
    });
    const runsThere = new RunsRepository(gone.db);
    runsThere.holdRunLocks();
    const dead = await runsThere.start('erp-csv', 'schedule', false);
    await runsThere.releaseRunLocks();
    await gone.close();
    delays.length = 0;

    const result = await processor(jobOf('dead-1'));
    expect(result.runs).toHaveLength(1);
    expect(delays).toEqual([]);
    const row = (await runs()).find((r) => r.id === dead);
    expect(row).toMatchObject({ status: 'interrupted', error: RUN_PROCESS_GONE });
  }, 30_000);
});
