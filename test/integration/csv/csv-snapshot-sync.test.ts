import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import { sourceSchema } from '../../../src/config/schema.js';
import { type CsvSourceConfig, createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { DropFilesRepository } from '../../../src/state/drop-files.js';
import { type SyncStateRepos, syncStateRepos } from '../../../src/state/repositories.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { openTestState } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const logger = pino({ level: 'silent' });
const HEADER = 'sourceId,fullName,currencyCode,tags';
const ids = (n: number) => Array.from({ length: n }, (_, i) => `ACC-${String(i + 1).padStart(2, '0')}`);
/** An accounts file of these ids; `bad` ids get an invalid currency (the row is refused). */
const accountsCsv = (keys: readonly string[], bad: readonly string[] = []) =>
  `${HEADER}\n${keys.map((k) => `${k},Customer ${k},${bad.includes(k) ? 'EURO' : 'EUR'},`).join('\n')}\n`;

describe('CSV snapshot mode through the sync engine, against the sandbox API and Postgres', () => {
  let sandbox: TestSandbox;
  let state: Awaited<ReturnType<typeof openTestState>>;
  let repos: SyncStateRepos;
  let client: ReceivablesClient;
  let root: string;
  let fileNo = 0;

  const config = (id: string, accounts: Record<string, unknown>): CsvSourceConfig =>
    sourceSchema.parse({
      id,
      type: 'csv',
      dropDir: join(root, id),
      stableSeconds: 0,
      streams: { accounts: { mode: 'snapshot', ...accounts } },
    }) as CsvSourceConfig;

  /** Drops `content` as a new accounts file of the source, then runs one pass. */
  const pass = async (
    cfg: CsvSourceConfig,
    content: string,
    options: { dryRun?: boolean; client?: ReceivablesClient } = {},
  ) => {
    const name = `accounts-${String(++fileNo).padStart(3, '0')}.csv`;
    await writeFile(join(cfg.dropDir, name), content);
    const source = createCsvSource({
      config: cfg,
      clock: { now: () => new Date() },
      logger,
      ledger: new DropFilesRepository(state.db),
      dryRun: options.dryRun ?? false,
    });
    const summary = await runSync({
      source,
      connectionId: cfg.id,
      api: new ClientSyncApi(options.client ?? client, sandbox.organizationId),
      state: repos,
      logger,
      dryRun: options.dryRun ?? false,
    });
    return { name, summary };
  };
  const account = async (sourceId: string, sourceIdOf = 'crm') => {
    const mapped = await repos.recordMap.get(sourceIdOf, 'account', sourceId);
    return (await sandbox.call('GET', `/accounts/${mapped!.apiId}`)).body;
  };
  const linkedOf = async (keys: readonly string[], source = 'crm') => {
    const linked: string[] = [];
    for (const key of keys) if ((await account(key, source)).source?.sourceId === key) linked.push(key);
    return linked;
  };
  const reportOf = async (source: string, name: string) => {
    const archive = join(root, source, 'archive');
    const [day] = await readdir(archive);
    return readFile(join(archive, day!, `${name}.errors.csv`), 'utf8');
  };
  const lastRunCounts = async (source: string) => {
    const row = await state.db
      .selectFrom('runs')
      .select(['counts', 'status'])
      .where('source_id', '=', source)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();
    return row as { counts: Record<string, any>; status: string };
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    state = await openTestState('csv_snapshot');
    repos = syncStateRepos(state.db);
    client = new ReceivablesClient({
      baseUrl: sandbox.baseUrl,
      tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
      limiter: createRateLimiter({ logger }),
      logger,
    });
    root = await mkdtemp(join(tmpdir(), 'csv-snapshot-'));
    for (const id of ['crm', 'crm-tag', 'crm-multi', 'crm-again', 'crm-fix', 'crm-fault'])
      await mkdir(join(root, id));
  });
  afterAll(async () => {
    await client?.close();
    await sandbox?.close();
    await state?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  const crm = () => config('crm', {});

  it('when the first snapshot file is synced, then every account is created and nothing is absent', async () => {
    const { summary } = await pass(crm(), accountsCsv(ids(20)));
    expect(summary.counts.accounts).toMatchObject({ created: 20, failed: 0 });
    expect(summary.snapshots).toEqual([]);
  });

  it('when a dry run reads a file without a row, then it plans the unlink and changes nothing', async () => {
    const { name, summary } = await pass(crm(), accountsCsv(ids(20).filter((k) => k !== 'ACC-12')), {
      dryRun: true,
    });
    expect(summary.plan).toContainEqual(
      expect.objectContaining({ kind: 'account', sourceKey: 'ACC-12', operation: 'unlink source' }),
    );
    expect(summary.snapshots).toMatchObject([{ action: 'applied', absent: 1, applied: 1 }]);
    expect(summary.warnings.map((w) => w.warning)).toEqual([
      'snapshot mode: 1 account absent from this file would be unlinked: ACC-12',
    ]);
    expect(await linkedOf(['ACC-12'])).toEqual(['ACC-12']);
    await rm(join(crm().dropDir, name));
  });

  it("when a row is removed from the next file, then its account's source is unlinked, once", async () => {
    const kept = ids(20).filter((k) => k !== 'ACC-07');
    const { name, summary } = await pass(crm(), accountsCsv(kept));
    expect(summary.failures).toEqual([]);
    expect(summary.snapshots).toMatchObject([
      {
        stream: 'accounts',
        action: 'applied',
        linked: 20,
        absent: 1,
        applied: 1,
        failed: 0,
        sample: ['ACC-07'],
      },
    ]);
    expect(summary.counts.accounts).toMatchObject({ created: 0, updated: 1, unchanged: 19, failed: 0 });
    const gone = await account('ACC-07');
    expect(gone.source).toBeNull();
    expect(gone.lastUnlinkedSource).toMatchObject({ connectionId: 'crm', sourceId: 'ACC-07' });
    expect(await linkedOf(kept)).toEqual(kept);
    // Said in the run's counts and in the file's report in the drop folder.
    const run = await lastRunCounts('crm');
    expect(run.counts.snapshots).toMatchObject([{ action: 'applied', applied: 1 }]);
    expect(await reportOf('crm', name)).toContain('1 account absent from this file was unlinked: ACC-07');

    // The same rows again (in another order, so not a duplicate file): nothing more to do.
    const again = await pass(crm(), accountsCsv([...kept].reverse()));
    expect(again.summary.snapshots).toEqual([]);
    expect(again.summary.counts.accounts).toMatchObject({ created: 0, updated: 0, unchanged: 19, failed: 0 });
  });

  it('when a row is refused for a bad field, then its account is still present: not unlinked', async () => {
    const kept = ids(20).filter((k) => k !== 'ACC-07');
    const { summary } = await pass(crm(), accountsCsv(kept, ['ACC-03']));
    expect(summary.counts.accounts).toMatchObject({ failed: 1, updated: 0 });
    expect(summary.failures.map((f) => f.sourceKey)).toEqual(['ACC-03']);
    expect(summary.snapshots).toEqual([]);
    expect(await linkedOf(['ACC-03'])).toEqual(['ACC-03']);
  });

  it('when half the rows are missing, then the deletions are held and said so, and nothing is unlinked', async () => {
    const linked = ids(20).filter((k) => k !== 'ACC-07');
    const half = linked.slice(0, 9);
    const { name, summary } = await pass(crm(), accountsCsv(half));
    expect(summary.snapshots).toMatchObject([
      { action: 'held', linked: 19, absent: 10, applied: 0, maxDeleteRatio: 0.1 },
    ]);
    const warning = summary.warnings.map((w) => w.warning).join('\n');
    expect(warning).toContain('10 accounts (52.6 % of the 19 linked) are absent from this file');
    expect(warning).toContain('the deletions are held and none was unlinked');
    expect(summary.counts.accounts).toMatchObject({ updated: 0, failed: 0 });
    expect(await linkedOf(linked)).toEqual(linked);
    const run = await lastRunCounts('crm');
    expect(run.counts.snapshots).toMatchObject([{ action: 'held', absent: 10 }]);
    expect(await reportOf('crm', name)).toContain('the deletions are held');
  });

  it('when the file cannot be read to its end, then nothing absent from it is unlinked', async () => {
    const linked = ids(20).filter((k) => k !== 'ACC-07');
    const broken = `${accountsCsv(linked.slice(0, 18))}ACC-20,"Customer ACC-20,EUR,\n`;
    const { summary } = await pass(crm(), broken);
    expect(summary.snapshots).toMatchObject([{ action: 'incomplete', applied: 0 }]);
    expect(await linkedOf(['ACC-19', 'ACC-20'])).toEqual(['ACC-19', 'ACC-20']);
  });

  it('when a row is over 1 MiB, then its account is still present (its sourceId read), or nothing is unlinked (its sourceId too long to read)', async () => {
    const linked = ids(20).filter((k) => k !== 'ACC-07');
    const long = 'x'.repeat(2 << 20);
    const named = accountsCsv(linked).replace('Customer ACC-05', `"Customer\n${long}"`);
    const { summary } = await pass(crm(), named);
    expect(summary.failures).toMatchObject([
      { sourceKey: 'ACC-05', origin: { line: 6 }, reason: expect.stringContaining('over 1 MiB') },
    ]);
    expect(summary.counts.accounts).toMatchObject({ failed: 1, updated: 0 });
    expect(summary.snapshots).toEqual([]);
    const unnamed = accountsCsv(linked).replace('ACC-05,Customer ACC-05', `${long},Customer ACC-05`);
    const again = await pass(crm(), unnamed);
    expect(again.summary.failures.map((f) => f.origin.line)).toEqual([6]);
    expect(again.summary.snapshots).toMatchObject([{ action: 'incomplete', applied: 0 }]);
    expect(await linkedOf(['ACC-05'])).toEqual(['ACC-05']);
  });

  it('when the row of an unlinked account comes back, then its source is linked again, once', async () => {
    const { summary } = await pass(crm(), accountsCsv([...ids(20)].reverse()));
    expect(summary.failures).toEqual([]);
    expect(summary.counts.accounts).toMatchObject({ created: 0, updated: 1, unchanged: 19, failed: 0 });
    expect((await account('ACC-07')).source).toMatchObject({ connectionId: 'crm', sourceId: 'ACC-07' });
    // The same account, not a second one, and the next pass has nothing to do.
    expect((await repos.recordMap.get('crm', 'account', 'ACC-07'))?.syncedState).not.toHaveProperty(
      'unlinked',
    );
    const again = await pass(crm(), accountsCsv(ids(20)));
    expect(again.summary.counts.accounts).toMatchObject({ created: 0, updated: 0, unchanged: 20, failed: 0 });
  });

  it('when an unlinked account was linked to another source meanwhile, then its returning row is a failure that says so', async () => {
    const kept = ids(20).filter((k) => k !== 'ACC-08');
    await pass(crm(), accountsCsv(kept));
    const taken = await account('ACC-08');
    expect(taken.source).toBeNull();
    const put = await sandbox.call('PUT', `/accounts/${taken.id}/source`, {
      body: { connectionId: 'someone-else', sourceId: 'X-8' },
    });
    expect(put.status).toBe(200);
    // Every row again, in an order not dropped before (a file of the same content would be skipped).
    const { summary } = await pass(crm(), accountsCsv([...ids(20).slice(10), ...ids(20).slice(0, 10)]));
    expect(summary.failures).toMatchObject([
      { sourceKey: 'ACC-08', reason: expect.stringMatching(/HTTP 400|linked/i) },
    ]);
    expect((await account('ACC-08')).source).toMatchObject({ connectionId: 'someone-else' });
  });

  it('when onDelete is tag, then an absent account gets the tag once, and loses it when its row comes back', async () => {
    const tagged = () => config('crm-tag', { onDelete: 'tag', deletedTag: 'gone' });
    const tagsOf = async (key: string) =>
      ((await account(key, 'crm-tag')).tags as Array<{ name: string }>).map((t) => t.name);
    await pass(tagged(), accountsCsv(ids(10)));
    const kept = ids(10).filter((k) => k !== 'ACC-04');
    const { summary } = await pass(tagged(), accountsCsv(kept));
    expect(summary.snapshots).toMatchObject([{ action: 'applied', onDelete: 'tag', absent: 1, applied: 1 }]);
    const acc4 = await account('ACC-04', 'crm-tag');
    expect(acc4.source).toMatchObject({ connectionId: 'crm-tag', sourceId: 'ACC-04' });
    expect(await tagsOf('ACC-04')).toEqual(['gone']);

    const again = await pass(tagged(), accountsCsv([...kept].reverse()));
    expect(again.summary.snapshots).toEqual([]);
    expect(again.summary.counts.accounts).toMatchObject({ updated: 0, unchanged: 9 });

    // Its row comes back (the other rows in the first file's order: not a duplicate of it).
    const back = await pass(
      tagged(),
      accountsCsv([...kept.slice(0, 3), 'ACC-04', ...kept.slice(3)].reverse()),
    );
    expect(back.summary.counts.accounts).toMatchObject({ updated: 1, failed: 0 });
    expect(await tagsOf('ACC-04')).toEqual([]);
  });

  it('when several files of the kind are in one pass, then only the last one is the whole set', async () => {
    const multi = config('crm-multi', {});
    await pass(multi, accountsCsv(ids(20)));
    // An older export lacking ACC-05, then a newer complete one, in the same pass.
    await writeFile(
      join(multi.dropDir, 'accounts-a.csv'),
      accountsCsv(ids(20).filter((k) => k !== 'ACC-05')),
    );
    await writeFile(join(multi.dropDir, 'accounts-b.csv'), accountsCsv(ids(20)));
    const source = createCsvSource({
      config: multi,
      clock: { now: () => new Date() },
      logger,
      ledger: new DropFilesRepository(state.db),
    });
    const summary = await runSync({
      source,
      connectionId: 'crm-multi',
      api: new ClientSyncApi(client, sandbox.organizationId),
      state: repos,
      logger,
    });
    expect(summary.snapshots).toEqual([]);
    expect(summary.warnings).toEqual([
      {
        unit: 'accounts-a.csv',
        warning:
          'snapshot mode: accounts-b.csv comes later in this pass and is the whole set of accounts; this file deletes nothing',
      },
    ]);
    expect(await linkedOf(['ACC-05'], 'crm-multi')).toEqual(['ACC-05']);
  });

  it('when a file has the same content as an earlier one, then in snapshot mode it is read again: a customer back is linked, held deletions apply once allowed', async () => {
    const again = (accounts: Record<string, unknown> = {}) => config('crm-again', accounts);
    const all = accountsCsv(ids(10));
    await pass(again(), all);
    await pass(again(), accountsCsv(ids(10).filter((k) => k !== 'ACC-03')));
    expect(await linkedOf(['ACC-03'], 'crm-again')).toEqual([]);

    // The first export again, byte for byte: not skipped as a duplicate.
    const back = await pass(again(), all);
    expect(back.summary.skipped).toEqual([]);
    expect(back.summary.counts.accounts).toMatchObject({ created: 0, updated: 1, unchanged: 9, failed: 0 });
    expect(await linkedOf(ids(10), 'crm-again')).toEqual(ids(10));

    // Half the set: held. The same file once maxDeleteRatio allows it: applied.
    const half = accountsCsv(ids(5));
    const held = await pass(again(), half);
    expect(held.summary.snapshots).toMatchObject([{ action: 'held', absent: 5 }]);
    const allowed = await pass(again({ maxDeleteRatio: 0.5 }), half);
    expect(allowed.summary.snapshots).toMatchObject([{ action: 'applied', absent: 5, applied: 5 }]);
    expect(await linkedOf(ids(10), 'crm-again')).toEqual(ids(5));
  });

  it('when a report of refused rows is corrected and dropped back, then it is not taken for the whole set: nothing is unlinked', async () => {
    const fix = config('crm-fix', { maxDeleteRatio: 1 });
    await pass(fix, accountsCsv(ids(6), ['ACC-02']));
    // The failures download / error report format: its errors.* columns, then the row, corrected.
    const corrected = `errors.line,errors.column,errors.reason,${HEADER}\n3,currencyCode,not an ISO 4217 code,ACC-02,Customer ACC-02,EUR,\n`;
    const { summary } = await pass(fix, corrected);
    expect(summary.counts.accounts).toMatchObject({ created: 1, failed: 0 });
    expect(summary.snapshots).toEqual([]);
    expect(summary.warnings.map((w) => w.warning)).toContain(
      'snapshot mode: this file has errors.* columns (rows corrected from a report), so it is not the whole set of accounts: it deletes nothing',
    );
    expect(await linkedOf(ids(6), 'crm-fix')).toEqual(ids(6));
  });

  it('when the API fails while the absent accounts are being unlinked, then the pass stops, the file goes back to the drop folder, and the next pass unlinks them once', async () => {
    const faulty = config('crm-fault', {});
    await pass(faulty, accountsCsv(ids(10)));
    // Every row unchanged (no call): the unlink is the only request, and the service refuses it.
    const quick = new ReceivablesClient({
      baseUrl: sandbox.baseUrl,
      tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
      limiter: createRateLimiter({ logger }),
      logger,
      retry: { maxAttempts: 2, baseDelayMs: 10 },
    });
    const lacking = accountsCsv(ids(10).filter((k) => k !== 'ACC-04'));
    await sandbox.admin('PUT', '/faults', { errorRate: 1, errorStatuses: [503] });
    try {
      await expect(pass(faulty, lacking, { client: quick })).rejects.toThrow(/503/);
    } finally {
      await sandbox.admin('PUT', '/faults', { errorRate: 0 });
      await quick.close();
    }
    const name = `accounts-${String(fileNo).padStart(3, '0')}.csv`;
    expect((await readdir(faulty.dropDir)).filter((f) => f.endsWith('.csv'))).toEqual([name]);
    expect(await linkedOf(['ACC-04'], 'crm-fault')).toEqual(['ACC-04']);

    // The fault lifted, the same file is taken again: ACC-04 unlinked, once.
    const source = createCsvSource({
      config: faulty,
      clock: { now: () => new Date() },
      logger,
      ledger: new DropFilesRepository(state.db),
    });
    const healed = await runSync({
      source,
      connectionId: 'crm-fault',
      api: new ClientSyncApi(client, sandbox.organizationId),
      state: repos,
      logger,
    });
    expect(healed.snapshots).toMatchObject([{ action: 'applied', absent: 1, applied: 1 }]);
    expect(await linkedOf(ids(10), 'crm-fault')).toEqual(ids(10).filter((k) => k !== 'ACC-04'));
    expect((await readdir(faulty.dropDir)).filter((f) => f.endsWith('.csv'))).toEqual([]);
  });
});
