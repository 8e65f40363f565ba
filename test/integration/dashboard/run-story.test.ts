import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import { dashboardProfileOf } from '../../../src/app/source-profiles.js';
import type { LoadedConfig } from '../../../src/config/load.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { dashboardWorkerConfig } from '../../support/dashboard-env.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { basic, silentLogger, testApp } from './dashboard-support.js';

const html = { authorization: basic(), accept: 'text/html' };

/**
 * A run's log tells what happened, not only "unit done": real passes (the CSV source, the engine,
 * the API client against the sandbox, the run log in Postgres) with 429s answered, a file that
 * cannot be read, a file no pattern takes, and a source whose file is still being written.
 */
describe("a run's log tells the story", () => {
  const schema = uniqueSchema('dash_run_story');
  let dir: string;
  let sandbox: TestSandbox;
  let loaded: LoadedConfig;
  let state: StateDatabase;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-run-story-'));
    const dropDir = join(dir, 'drop');
    const slowDir = join(dir, 'slow');
    mkdirSync(slowDir, { recursive: true });
    sandbox = await startTestSandbox({ faults: { force429: 2, force429RetryAfter: 1 } });
    loaded = await dashboardWorkerConfig({
      dir,
      dropDir,
      schema,
      sandbox,
      user: 'ops',
      password: 'pw',
      yaml: `  - id: slow-csv\n    type: csv\n    dropDir: ${slowDir}\n    stableSeconds: 3600\n`,
    });
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    writeFileSync(join(dropDir, 'invoices-bad.csv'), 'sourceId,accountSourceId\nI-1,C-1\n');
    writeFileSync(join(dropDir, 'Kunden.txt'), 'not for us\n');
    writeFileSync(join(slowDir, 'accounts-big.csv'), `${ACCOUNT_HEADER}\n`);
    const runtime = await openSyncRuntime(loaded, silentLogger);
    try {
      const service = syncServiceOf(runtime, loaded.config.sources);
      await service.syncSource('erp-csv', { trigger: 'manual' });
      await service.syncSource('slow-csv', { trigger: 'manual' });
    } finally {
      await runtime.close(); // writes what the run log holds
    }
    state = await openStateDatabase({ databaseUrl: TEST_DATABASE_URL, dataDir: dir, schema, migrate: false });
  }, 60_000);

  afterAll(async () => {
    await state?.close();
    await sandbox?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  const runPage = async (sourceId: string) => {
    const run = await state.db
      .selectFrom('runs')
      .select('id')
      .where('source_id', '=', sourceId)
      .executeTakeFirstOrThrow();
    const app = testApp(state, { sources: loaded.config.sources, describeSource: dashboardProfileOf });
    return (await app.inject({ url: `/runs/${run.id}`, headers: html })).body;
  };

  it('when a pass met 429s, a file it could not read and a file no pattern takes, then its log says each, and how it ended', async () => {
    const page = await runPage('erp-csv');
    expect(page).toMatch(
      /request failed, retrying<\/td><td><code class="small">[^<]*HTTP_429[^<]*status&quot;:429/,
    );
    expect(page).toMatch(
      /file rejected: it could not be read<\/td><td><code class="small">[^<]*invoices-bad\.csv/,
    );
    expect(page).toMatch(
      /files ignored: their names match no kind&#39;s pattern \(files:\)<\/td><td><code class="small">[^<]*Kunden\.txt/,
    );
    expect(page).toMatch(/pass done: partial<\/td><td><code class="small">[^<]*&quot;created&quot;:3/);
    expect(page).toContain('unit done');
  });

  it('when a pass found only a file still being written, then its log and its run say so, not "succeeded 0/0/0/0"', async () => {
    const page = await runPage('slow-csv');
    expect(page).toContain('pass done: nothing read, files still being written');
    expect(page).toMatch(
      /files still being written: left for a later pass<\/td><td><code class="small">[^<]*accounts-big\.csv/,
    );
    expect(page).toContain('data-status="waiting">nothing read: files being written');
  });
});
