import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FailureInput } from '../../../src/domain/sync-state.js';
import { createLogger } from '../../../src/logging/logger.js';
import type { StateDatabase } from '../../../src/state/database.js';
import { FailureQueries } from '../../../src/state/failure-queries.js';
import { FailuresRepository } from '../../../src/state/failures.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { RunLogSink } from '../../../src/state/run-log-sink.js';
import { DEFAULT_RUN_LOG_RETENTION, RunLogsRepository } from '../../../src/state/run-logs.js';
import { RunRecordsRepository } from '../../../src/state/run-records.js';
import { RunsRepository, staleRunIds } from '../../../src/state/runs.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { openStateOfKind } from '../../support/postgres.js';
import { account, FakeApi, invoice, trackedSource } from '../../unit/sync/fakes.js';

const failure = (sourceId: string, sourceKey: string, over: Partial<FailureInput> = {}): FailureInput => ({
  sourceId,
  kind: 'invoice',
  sourceKey,
  stage: 'create',
  message: 'HTTP 400',
  retryable: false,
  ...over,
});

/**
 * The run history the dashboard's pages read: the records each run touched (written by the sync
 * engine, one statement per batch), the run log (a bounded pino sink), and dismissed failures.
 * On real Postgres and on the embedded DB, one database per kind (each test has its own source).
 */
describe.each(['postgres', 'embedded'] as const)('run history in the %s state DB', (kind) => {
  let state: StateDatabase;
  beforeAll(async () => {
    state = await openStateOfKind(kind, 'run_history');
  }, 60_000);
  afterAll(() => state?.close());

  it('when a pass creates records and one fails, then its run lists them with their API ids; a pass that changes nothing lists none', async () => {
    const repos = syncStateRepos(state.db);
    const api = new FakeApi();
    const logger = pino({ level: 'silent' });
    const records = [account(1), account(2), invoice(1, 1), invoice(2, 404)];
    const pass = () =>
      runSync({
        source: trackedSource('src-a', records).source,
        connectionId: 'src-a',
        api,
        state: repos,
        logger,
      });
    const first = await pass();
    const second = await pass();

    const runRecords = new RunRecordsRepository(state.db);
    const { rows, total } = await runRecords.ofRun(first.runId!, { offset: 0, limit: 10 });
    expect(total).toBe(4);
    const byKey = new Map(rows.map((r) => [`${r.kind}:${r.sourceKey}`, r]));
    const a1 = await repos.recordMap.getMany('src-a', 'account', ['A1']);
    expect(byKey.get('account:A1')).toMatchObject({ outcome: 'created', apiId: a1.get('A1')!.apiId });
    expect(byKey.get('invoice:I1')).toMatchObject({
      outcome: 'created',
      apiId: expect.stringMatching(/^doc-/),
    });
    expect(byKey.get('invoice:I2')).toMatchObject({ outcome: 'failed', apiId: null });
    expect((await runRecords.ofRun(first.runId!, { offset: 0, limit: 10, outcome: 'failed' })).total).toBe(1);
    // The second pass found everything unchanged (I2 still fails: it is its only record).
    expect(
      (await runRecords.ofRun(second.runId!, { offset: 0, limit: 10 })).rows.map((r) => r.sourceKey),
    ).toEqual(['I2']);
    const runsOfI2 = await runRecords.runsOf('src-a', 'invoice', 'I2');
    expect(runsOfI2.map((r) => r.runId)).toEqual([second.runId, first.runId]);
    expect(runsOfI2[0]).toMatchObject({ outcome: 'failed', trigger: 'once', status: 'partial' });
    expect(await runRecords.runsOf('other-source', 'invoice', 'I2')).toEqual([]);
  });

  it('when 12,000 records are written for one run, then a page of them comes back in order with the total', async () => {
    const runs = new RunsRepository(state.db);
    const runId = await runs.start('src-big', 'once', false);
    const runRecords = new RunRecordsRepository(state.db);
    await runRecords.record(
      runId,
      'src-big',
      Array.from({ length: 12_000 }, (_, i) => ({
        kind: 'account' as const,
        sourceKey: `K${i}`,
        outcome: 'updated' as const,
      })),
    );
    const page = await runRecords.ofRun(runId, { offset: 11_990, limit: 100 });
    expect(page.total).toBe(12_000);
    expect(page.rows.map((r) => r.sourceKey)).toEqual(Array.from({ length: 10 }, (_, i) => `K${11_990 + i}`));
    await runs.finish(runId, 'succeeded', {});
  });

  it('when a pass logs through the sink, then its lines with its runId are kept, redacted, at most the bound, and others are left out', async () => {
    const runs = new RunsRepository(state.db);
    const runId = await runs.start('src-log', 'once', false);
    const logs = new RunLogsRepository(state.db);
    const sink = new RunLogSink({ maxLinesPerRun: 5, batchSize: 3 });
    sink.attach(logs);
    const logger = createLogger({
      level: 'info',
      format: 'json',
      destination: pino.destination('/dev/null'),
      also: [sink],
    });
    logger.info('no run: not kept');
    const pass = logger.child({ sourceId: 'src-log', runId });
    pass.info({ unit: 'accounts.csv', token: 'SECRET-1' }, 'unit done');
    pass.debug('below the level');
    for (let i = 0; i < 20; i++) pass.warn({ sourceKey: `A${i}` }, 'record failed');
    await sink.close();

    const lines = await logs.ofRun(runId);
    expect(lines).toHaveLength(6);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'unit done',
      fields: { unit: 'accounts.csv', token: '[redacted]' },
    });
    expect(lines[4]).toMatchObject({ level: 'warn', msg: 'record failed', fields: { sourceKey: 'A3' } });
    expect(lines[5]!.msg).toBe('log cut: only the first 5 lines of a run are kept');
    expect(sink.stats).toEqual({ written: 6, dropped: 15, failed: 0 });
    pass.info('after close');
    expect(sink.stats.dropped).toBe(16);
    await runs.finish(runId, 'succeeded', {});
  });

  it('when the state DB refuses the run log, then logging goes on, the lines are counted as lost and the error is told', async () => {
    const errors: unknown[] = [];
    const sink = new RunLogSink({ onError: (error) => errors.push(error) });
    sink.attach({
      insertMany: async () => {
        throw new Error('state DB down');
      },
      prune: async () => 0,
    });
    const logger = createLogger({
      level: 'info',
      format: 'json',
      destination: pino.destination('/dev/null'),
      also: [sink],
    });
    for (let i = 0; i < 3; i++) logger.child({ runId: '42' }).info('line');
    await sink.close();
    expect(sink.stats).toMatchObject({ written: 0, failed: 3 });
    expect(String(errors[0])).toContain('state DB down');
  });

  it('when logs are pruned, then only the latest runs within the days kept keep theirs', async () => {
    const runs = new RunsRepository(state.db);
    const logs = new RunLogsRepository(state.db);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await runs.start('src-prune', 'once', false);
      await runs.finish(id, 'succeeded', {});
      ids.push(id);
      await logs.insertMany([{ runId: id, at: new Date(), level: 'info', msg: `run ${i}`, fields: null }]);
    }
    await logs.prune({ keepDays: 14, keepRuns: 2 });
    const kept = await Promise.all(ids.map(async (id) => (await logs.ofRun(id)).length));
    expect(kept).toEqual([0, 0, 1, 1]);
    // Ten days on, the runs kept are older than a week: gone too.
    await logs.prune({ keepDays: 7, keepRuns: 100 }, new Date(Date.now() + 10 * 86_400_000));
    expect((await logs.ofRun(ids[3]!)).length).toBe(0);
  });

  it('when runs are older than the days their touched records are kept, then those go, and the newer ones stay', async () => {
    const runs = new RunsRepository(state.db);
    const logs = new RunLogsRepository(state.db);
    const touched = new RunRecordsRepository(state.db);
    const id = await runs.start('src-prune-records', 'once', false);
    await runs.finish(id, 'succeeded', {});
    await touched.record(id, 'src-prune-records', [{ kind: 'account', sourceKey: 'A1', outcome: 'created' }]);
    const count = async () => (await touched.ofRun(id, { offset: 0, limit: 10 })).total;
    await logs.prune(
      { keepDays: 14, keepRuns: 500, keepRecordsDays: 90 },
      new Date(Date.now() + 30 * 86_400_000),
    );
    expect(await count()).toBe(1);
    await logs.prune(
      { keepDays: 14, keepRuns: 500, keepRecordsDays: 90 },
      new Date(Date.now() + 91 * 86_400_000),
    );
    expect(await count()).toBe(0);
  });

  it('when failures are dismissed, then they no longer count as open and stay in the history with who and why; failing again opens a new one', async () => {
    const failures = new FailuresRepository(state.db);
    await failures.recordMany([
      failure('src-d', 'INV-1'),
      failure('src-d', 'INV-2'),
      failure('src-d', 'INV-3'),
    ]);
    const open = await failures.open({ sourceId: 'src-d' });
    const ids = open.filter((f) => f.sourceKey !== 'INV-3').map((f) => f.id);
    expect(await failures.dismiss('src-d', ids, { reason: 'fixed by hand', by: 'ops' })).toBe(2);
    expect(await failures.dismiss('src-d', ids, { reason: 'again', by: 'ops' })).toBe(0);
    expect(await failures.dismiss('another-source', [open[2]!.id], { reason: 'not its', by: 'ops' })).toBe(0);

    expect((await failures.open({ sourceId: 'src-d' })).map((f) => f.sourceKey)).toEqual(['INV-3']);
    expect(await failures.countOpen('src-d')).toBe(1);
    expect((await failures.open({ sourceId: 'src-d', ids })).length).toBe(0);
    const history = await new FailureQueries(state.db).closedOfSource('src-d', 10);
    expect(history.map((f) => [f.sourceKey, f.dismissedBy, f.dismissedReason])).toEqual(
      expect.arrayContaining([
        ['INV-1', 'ops', 'fixed by hand'],
        ['INV-2', 'ops', 'fixed by hand'],
      ]),
    );
    expect(history[0]!.resolvedAt).not.toBeNull();

    await failures.record(failure('src-d', 'INV-1', { message: 'HTTP 400 again' }));
    expect((await failures.open({ sourceId: 'src-d', sourceKeys: ['INV-1'] }))[0]).toMatchObject({
      attempts: 1,
      message: 'HTTP 400 again',
    });
    expect(await failures.openKinds('src-d')).toEqual(new Set(['invoice']));
  });

  it('when a run is left running by a process that holds no lock, then it reads as stale; the runs of this process never do', async () => {
    const runs = new RunsRepository(state.db);
    const mine = await runs.start('src-stale', 'once', false);
    expect(await staleRunIds(state.db, [mine])).toEqual(new Set());
    // A row as a killed process leaves it: running, nobody behind it.
    const { id: dead } = await state.db
      .insertInto('runs')
      .values({ source_id: 'src-stale', trigger: 'schedule', status: 'running', counts: '{}', error: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect(await staleRunIds(state.db, [mine, String(dead)])).toEqual(new Set([String(dead)]));
    await runs.finish(mine, 'succeeded', {});
  });

  it("when runs and drop files are older than the history kept, then they go, but each source's latest run, a running one and those of open failures stay", async () => {
    const runs = new RunsRepository(state.db);
    const logs = new RunLogsRepository(state.db);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const id = await runs.start('src-history', 'cron', false);
      await runs.finish(id, i === 1 ? 'partial' : 'succeeded', {});
      ids.push(id);
    }
    const running = await runs.start('src-history-running', 'cron', false);
    await new FailuresRepository(state.db).recordMany([failure('src-history', 'INV-9', { runId: ids[1]! })]);
    await state.db
      .insertInto('drop_files')
      .values({
        source_id: 'src-history',
        name: 'invoices.csv',
        checksum: 'c'.repeat(64),
        size: 10,
        status: 'done',
        claimed_at: new Date(),
        finished_at: new Date(),
      })
      .execute();
    const left = async () =>
      (await state.db.selectFrom('runs').select('id').where('source_id', 'like', 'src-history%').execute())
        .map((r) => String(r.id))
        .sort((a, b) => Number(a) - Number(b));
    const files = async () =>
      (await state.db.selectFrom('drop_files').select('id').where('source_id', '=', 'src-history').execute())
        .length;
    // 100 days on: within the 180 kept.
    await logs.prune(DEFAULT_RUN_LOG_RETENTION, new Date(Date.now() + 100 * 86_400_000));
    expect(await left()).toEqual([...ids, running]);
    expect(await files()).toBe(1);
    // 200 days on: the latest run, the one of the open failure and the running one stay.
    await logs.prune(DEFAULT_RUN_LOG_RETENTION, new Date(Date.now() + 200 * 86_400_000));
    expect(await left()).toEqual([ids[1]!, ids[3]!, running]);
    expect(await files()).toBe(0);
    await runs.finish(running, 'succeeded', {});
  });
});
