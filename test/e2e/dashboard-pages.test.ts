import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSyncRuntime, syncServiceOf } from '../../src/app/runtime.js';
import { type RunningWorkerDaemon, startWorker } from '../../src/app/worker.js';
import { type LoadedConfig, loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logging/logger.js';
import type { StateDatabase } from '../../src/state/database.js';
import { PausedSources } from '../../src/state/paused-sources.js';
import { launchChromium, signIn } from '../support/browser.js';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { openTestState, TEST_DATABASE_URL } from '../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../support/sandbox.js';

const USER = 'ops';
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
/** `npm run screenshots`: each page is saved into docs/images/ for docs/dashboard.md. */
const SCREENSHOTS =
  process.env.SCREENSHOTS === '1' ? join(import.meta.dirname, '..', '..', 'docs', 'images') : null;

/**
 * The dashboard's pages in Chromium, against the worker daemon (real Redis queue, BullMQ worker,
 * Postgres, the sandbox API): a source's page, a run's page, the record search, dismissing a
 * failure, the failures CSV dropped back fixed, a retry of selected failures, and the links to
 * bull-board and back. One seeded state and one browser for the whole file; the tests run in order.
 */
describe('the dashboard pages in a browser', () => {
  const logger = createLogger({ level: 'error', format: 'json' });
  let dir: string;
  let dropDir: string;
  let configFile: string;
  let env: Record<string, string>;
  let sandbox: TestSandbox;
  let daemon: RunningWorkerDaemon;
  let state: StateDatabase & { schema: string };
  let url: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let firstRunId: string;
  let staleRunId: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-dash-pages-'));
    dropDir = join(dir, 'drop');
    sandbox = await startTestSandbox();
    state = await openTestState('dash_pages');

    configFile = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      configFile,
      `sources:\n  - id: erp-csv\n    type: csv\n    dropDir: ${dropDir}\n    stableSeconds: 0\n    schedule: "0 3 * * *"\n`,
    );
    env = {
      ...apiEnvOf(sandbox),
      DATABASE_URL: TEST_DATABASE_URL,
      DATABASE_SCHEMA: state.schema,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      DASHBOARD_HOST: '127.0.0.1',
      DASHBOARD_PORT: '0',
      DASHBOARD_USER: USER,
      DASHBOARD_PASSWORD: PASSWORD,
      LOG_LEVEL: 'info',
    };
    const loaded: LoadedConfig = loadConfig({ file: configFile, env });

    // A first pass: 3 accounts; invoices 1 synced, 2, 3, 5, 6 and 7 naming accounts that do not
    // exist (refused after the source), 4 with an amount that is no amount (refused by the source).
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, 3).map((i) => accountRow(i)),
    );
    dropCsv(dropDir, 'invoices.csv', INVOICE_HEADER, [
      invoiceRow(1, 1),
      invoiceRow(2, 404),
      invoiceRow(3, 405),
      invoiceRow(4, 1, { total: '12O.00' }),
      invoiceRow(5, 406),
      invoiceRow(6, 407),
      invoiceRow(7, 408),
    ]);
    const once = await openSyncRuntime(loaded, logger);
    try {
      const [summary] = await syncServiceOf(once, loaded.config.sources).syncSource('erp-csv', {
        trigger: 'once',
      });
      firstRunId = summary!.runId!;
    } finally {
      await once.close();
    }

    daemon = await startWorker(loaded, {
      logger,
      settings: { prefix: `test-dash-pages-${randomBytes(4).toString('hex')}`, attempts: 1 },
    });
    url = daemon.dashboard!.url;
    // A run whose process was killed: still `running`, nobody behind it.
    const { id } = await state.db
      .insertInto('runs')
      .values({ source_id: 'erp-csv', trigger: 'schedule', status: 'running', counts: '{}', error: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    staleRunId = String(id);

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
    page = await context.newPage();
    await signIn(page, url, USER, PASSWORD);
    await page.locator('[data-source="erp-csv"]').waitFor();
  }, 90_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    if (daemon) {
      await daemon.queues.queue.obliterate({ force: true });
      await daemon.close();
    }
    await state?.close(); // drops its schema
    await sandbox?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const shot = async (name: string) => {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  const openFailureKeys = async () =>
    page
      .locator('#open-failures-table tbody tr')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
  /** Reloads `path` until `locator` is there: the source's page does not refresh itself. */
  const reloadUntil = async (path: string, locator: () => Locator, timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      await page.goto(`${url}${path}`);
      if ((await locator().count()) > 0) return;
      if (Date.now() > until) throw new Error(`${path}: still not there after ${timeoutMs} ms`);
      await page.waitForTimeout(500);
    }
  };

  it('when a user opens a source from the sync page, then its configuration, schedule, runs, failures and files show, and a report downloads', async () => {
    await page.goto(url);
    await page.locator('[data-source="erp-csv"] h3 a').click();
    await page.locator('[data-source-page="erp-csv"]').waitFor();
    const config = page.locator('#config');
    expect(await config.textContent()).toContain(dropDir);
    expect(await config.locator('dd', { hasText: 'erp-csv' }).first().textContent()).toContain('erp-csv');
    expect(await page.locator('[data-field="schedule-words"]').textContent()).toBe('At 03:00');
    expect(await page.locator('[data-field="next-run"] time').getAttribute('datetime')).toMatch(
      /T03:00:00\.000Z$/,
    );
    expect(await page.locator('[data-field="records-account"]').textContent()).toBe('3');

    expect(
      await page.locator(`#source-runs tr[data-run="${firstRunId}"] [data-status="partial"]`).count(),
    ).toBe(1);
    // The run its killed process left: stale, not running.
    expect(
      await page.locator(`#source-runs tr[data-run="${staleRunId}"] [data-status="stale"]`).count(),
    ).toBe(1);
    expect(await page.locator('h1 [data-field="state"]').textContent()).toBe('active');

    expect(await page.locator('[data-field="open-failures"]').textContent()).toBe('6');
    expect(await openFailureKeys()).toEqual(
      expect.arrayContaining(['INV-2', 'INV-3', 'INV-4', 'INV-5', 'INV-6', 'INV-7']),
    );
    expect(await page.locator('#open-failures-table tr[data-key="INV-4"]').textContent()).toContain(
      'totalAmount',
    );

    const file = page.locator('#files tr[data-file="invoices.csv"]');
    // 1 of its 7 rows went through: partial, not failed.
    expect(await file.locator('[data-status]').textContent()).toBe('partial');
    const [report] = await Promise.all([
      page.waitForEvent('download'),
      file.getByRole('link', { name: 'errors.csv' }).click(),
    ]);
    expect(report.suggestedFilename()).toBe('invoices.csv.errors.csv');
    const text = readFileSync((await report.path())!, 'utf8');
    expect(text.split('\r\n')[0]).toMatch(/^errors\.line,errors\.column,errors\.reason,sourceId,/);
    expect(text).toContain('INV-4');
    await shot('dashboard-source');
  });

  it('when a user opens a run, then its trigger, counts, the records it touched with their API ids, its failures and its log show', async () => {
    await page.goto(`${url}/sources/erp-csv`);
    await page.locator(`#source-runs tr[data-run="${firstRunId}"] a`).click();
    await page.locator(`[data-run-page="${firstRunId}"]`).waitFor();
    expect(await page.locator('[data-field="trigger"]').textContent()).toBe('once');
    expect(await page.locator('[data-field="run-status"]').textContent()).toBe('partial');
    const invoices = page.locator('#run-counts tr[data-kind="invoices"]');
    expect(await invoices.locator('[data-field="created"]').textContent()).toBe('1');
    expect(await invoices.locator('[data-field="failed"]').textContent()).toBe('6');

    const stats = await sandbox.admin('GET', '/stats');
    expect(stats).toMatchObject({ accounts: 3 });
    const created = page.locator('#run-records-table tr[data-outcome="created"]');
    expect(await created.count()).toBe(4);
    expect(
      await page.locator('#run-records-table tr[data-key="INV-1"] [data-field="api-id"]').textContent(),
    ).not.toBe('');
    expect(await page.locator('#run-records-table tr[data-key="INV-2"]').getAttribute('data-outcome')).toBe(
      'failed',
    );
    // Refused by the source: among its failures, not among the records it sent.
    expect(await page.locator('#run-records-table tr[data-key="INV-4"]').count()).toBe(0);
    expect(await page.locator('#run-failures-table tr[data-key="INV-4"]').textContent()).toContain('open');
    expect(await page.locator('#run-failures-table tr[data-key="INV-2"]').textContent()).toContain('C-404');

    const log = page.locator('#run-log-table');
    expect(await log.locator('tr', { hasText: 'unit done' }).count()).toBe(2);
    // The file's line counts every row of it that failed, the one its checks refused too.
    expect(
      await log.locator('tr', { hasText: 'unit done' }).filter({ hasText: 'invoices.csv' }).textContent(),
    ).toContain('"failed":6');
    expect(
      await log.locator('tr[data-level="warn"]', { hasText: 'record failed' }).count(),
    ).toBeGreaterThanOrEqual(5);

    await shot('dashboard-run');
    await page.getByRole('link', { name: 'failed', exact: true }).click();
    await page.waitForURL(/outcome=failed/);
    expect(await page.locator('#run-records-table tbody tr').count()).toBe(5);

    // The stale run's page says so.
    await page.goto(`${url}/runs/${staleRunId}`);
    expect(await page.locator('[data-field="run-status"]').textContent()).toBe('stale');
  });

  it('when a user searches a record by its source id, then its API id, sync age, last payload, failures and runs show', async () => {
    await page.goto(`${url}/records`);
    await page.getByLabel('Source id').fill('INV-1');
    await page.getByRole('button', { name: 'Search' }).click();
    const synced = page.locator('[data-record="invoice:INV-1"]');
    await synced.waitFor();
    expect(await synced.locator('[data-field="api-id"]').textContent()).toMatch(/\S/);
    expect(await synced.locator('[data-field="synced-at"]').textContent()).toMatch(/s ago|min ago/);
    expect(await synced.locator('[data-field="payload"]').textContent()).toContain('"number": "F-00001"');
    expect(await synced.locator(`tr[data-run="${firstRunId}"]`).textContent()).toContain('created');

    await page.getByLabel('Source id').fill('INV-2');
    await page.getByRole('button', { name: 'Search' }).click();
    const failed = page.locator('[data-record="invoice:INV-2"]');
    await failed.waitFor();
    expect(await failed.textContent()).toContain('never synced');
    expect(await failed.locator('tr[data-key="INV-2"] [data-field="state"]').textContent()).toContain('open');

    await page.getByLabel('Source id').fill('INV');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await page.locator('#near li').count()).toBe(7);
  });

  it('when a user dismisses a failure with a reason, then it leaves the open failures and shows in the history; `failures` no longer lists it', async () => {
    await page.goto(`${url}/sources/erp-csv`);
    await page.locator('#open-failures-table tr[data-key="INV-6"] input[type="checkbox"]').check();
    await page.getByLabel('Reason (to dismiss)').fill('cancelled in the ERP');
    await page.getByRole('button', { name: 'Dismiss selected' }).click();
    await page.getByText('1 failure of erp-csv dismissed').waitFor();
    expect(await page.locator('[data-field="open-failures"]').textContent()).toBe('5');
    expect(await openFailureKeys()).not.toContain('INV-6');
    const closed = page.locator('#failure-history tr[data-key="INV-6"]');
    expect(await closed.locator('[data-field="state"]').textContent()).toContain('dismissed');
    expect(await closed.textContent()).toContain(USER);
    expect(await closed.locator('[data-field="dismissed-reason"]').textContent()).toBe(
      'cancelled in the ERP',
    );

    const cli = await runCli(['--config', configFile, 'failures', '--source', 'erp-csv', '--json'], { env });
    expect(cli.code).toBe(0);
    const keys = cli.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).sourceKey);
    expect(keys.sort()).toEqual(['INV-2', 'INV-3', 'INV-4', 'INV-5', 'INV-7']);
  });

  it('when a user downloads the open failures as CSV, fixes them and drops the file back, then a pass syncs the rows and their failures resolve', async () => {
    await page.goto(`${url}/sources/erp-csv`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('[data-download="invoice"]').click(),
    ]);
    expect(download.suggestedFilename()).toBe('invoices-failures-erp-csv.csv');
    const csv = readFileSync((await download.path())!, 'utf8');
    const lines = csv.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'errors.file,errors.line,errors.column,errors.reason,sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,file,paidAmount,updatedAt',
    );
    const rows = parse(csv) as string[][];
    const byKey = new Map(rows.slice(1).map((r) => [r[4], r]));
    expect([...byKey.keys()].sort()).toEqual(['INV-2', 'INV-3', 'INV-4', 'INV-5', 'INV-7']);
    // Each row says why it failed and where, then holds the row as it was (INV-4's bad amount too).
    expect(byKey.get('INV-2')!.slice(0, 6)).toEqual([
      'invoices.csv',
      '3',
      'accountSourceId',
      expect.stringContaining('C-404'),
      'INV-2',
      'C-404',
    ]);
    expect(byKey.get('INV-4')!.slice(0, 4)).toEqual([
      'invoices.csv',
      '5',
      'totalAmount',
      expect.stringContaining('12O.00'),
    ]);
    expect(byKey.get('INV-4')![9]).toBe('12O.00');

    // The user fixes INV-2, INV-3 and INV-4 and leaves INV-5 and INV-7 out; the accounts they lack arrive.
    const fixed = lines
      .filter((l) => !l.includes(',INV-5,') && !l.includes(',INV-7,'))
      .map((l) => l.replace(',C-404,', ',C-1,').replace(',C-405,', ',C-2,').replace(',12O.00,', ',120.00,'));
    writeFileSync(join(dropDir, download.suggestedFilename()), `${fixed.join('\r\n')}\r\n`);
    dropCsv(dropDir, 'accounts-2.csv', ACCOUNT_HEADER, [accountRow(406), accountRow(408)]);

    await page.goto(url);
    await page
      .locator('[data-source="erp-csv"]')
      .getByRole('button', { name: 'Re-sync', exact: true })
      .click();
    await page.getByText('Re-sync of erp-csv queued').waitFor();
    await reloadUntil('/sources/erp-csv', () =>
      page.locator('#source-runs tbody tr').first().locator('[data-status="succeeded"]'),
    );
    expect(await openFailureKeys()).toEqual(expect.arrayContaining(['INV-5', 'INV-7']));
    expect(await page.locator('[data-field="open-failures"]').textContent()).toBe('2');
    for (const key of ['INV-2', 'INV-3', 'INV-4'])
      expect(
        await page.locator(`#failure-history tr[data-key="${key}"] [data-field="state"]`).textContent(),
      ).toContain('resolved');
    expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 5, invoices: 4 });
    // The pass closed the run its killed process had left.
    expect(
      await page.locator(`#source-runs tr[data-run="${staleRunId}"] [data-status="interrupted"]`).count(),
    ).toBe(1);
    await shot('dashboard-source-after-fix');

    // The record search of a fixed row: its failure resolved, the run that failed it and the one that created it.
    await page.goto(`${url}/records?source=erp-csv&q=INV-2`);
    const record = page.locator('[data-record="invoice:INV-2"]');
    expect(await record.locator('tr[data-key="INV-2"] [data-field="state"]').textContent()).toContain(
      'resolved',
    );
    expect(await record.locator('table.record-runs tbody tr').count()).toBe(2);
    await record.locator('summary', { hasText: 'show' }).first().click();
    await shot('dashboard-record');
  });

  it('when a user retries selected failures, then only those are retried: the run lists them, its job is linked in bull-board, and bull-board links back', async () => {
    await page.goto(`${url}/sources/erp-csv`);
    await page.locator('#open-failures-table tr[data-key="INV-5"] input[type="checkbox"]').check();
    await page.getByRole('button', { name: 'Retry selected' }).click();
    await page.getByText('Retry of 1 selected failure of erp-csv queued').waitFor();
    const retryRun = () =>
      page.locator('#source-runs tbody tr', { hasText: 'retry' }).locator('[data-status="succeeded"]');
    await reloadUntil('/sources/erp-csv', retryRun);
    expect(await openFailureKeys()).toEqual(['INV-7']);
    expect(
      await page.locator('#open-failures-table tr[data-key="INV-7"] [data-field="attempts"]').textContent(),
    ).toBe('1');
    expect(
      await page.locator('#failure-history tr[data-key="INV-5"] [data-field="state"]').textContent(),
    ).toContain('resolved');

    await page.locator('#source-runs tbody tr', { hasText: 'retry' }).locator('a').first().click();
    await page.locator('[data-run-page]').waitFor();
    expect(
      await page
        .locator('#run-records-table tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key'))),
    ).toEqual(['INV-5']);
    const job = page.locator('[data-field="job"]');
    expect(await job.getAttribute('href')).toMatch(/^\/queues\/queue\/sync\/failure-retry\.erp-csv\./);

    // bull-board shows the job; a link in sight leads back to the dashboard.
    await job.click();
    await page.getByText('failure-retry.erp-csv', { exact: false }).first().waitFor({ timeout: 15_000 });
    // A link back is in sight on every bull-board page (its header's links menu has one too).
    await page.locator('#back-to-dashboard').click();
    await page.locator('[data-source="erp-csv"]').waitFor();
    await shot('dashboard-sync');
  });

  it("when the failure actions come without credentials or without the page's token, then they are refused and nothing changes", async () => {
    const basic = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
    const form = (extra: Record<string, string>) =>
      new URLSearchParams({ sourceId: 'erp-csv', ids: '1', reason: 'no', ...extra }).toString();
    const post = (path: string, headers: Record<string, string>, body: string) =>
      fetch(`${url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          ...headers,
        },
        body,
      });
    for (const path of ['/actions/failures/dismiss', '/actions/failures/retry']) {
      expect((await post(path, {}, form({}))).status).toBe(401);
      expect((await post(path, { authorization: basic }, form({}))).status).toBe(403);
      expect((await post(path, { authorization: basic }, form({ _csrf: 'forged' }))).status).toBe(403);
      const status = await fetch(`${url}/api/status`, { headers: { authorization: basic } });
      const { csrfToken } = (await status.json()) as { csrfToken: string };
      const crossSite = await post(
        path,
        { authorization: basic, origin: 'https://evil.example' },
        form({ _csrf: csrfToken }),
      );
      expect(crossSite.status).toBe(403);
    }
    expect((await fetch(`${url}/sources/erp-csv/failures.csv?kind=invoice`)).status).toBe(401);
    expect(await page.goto(`${url}/runs/999999`).then((r) => r?.status())).toBe(404);
  });

  it('when a source was paused automatically, then its page says why with Resume, and Resume starts it again', async () => {
    const paused = new PausedSources(state.db);
    const reason = 'paused automatically after 3 failed runs: the API at http://127.0.0.1:9 is unreachable';
    expect(await paused.pauseAutomatically('erp-csv', reason)).toBe(true);
    await page.goto(`${url}/sources/erp-csv`);
    expect(await page.locator('h1 [data-field="state"]').textContent()).toContain('paused');
    expect(await page.locator('#pause').getAttribute('data-paused-by')).toBe('auto');
    expect(await page.locator('#pause [data-field="pause-reason"]').textContent()).toBe(reason);
    expect(await page.locator('[data-field="next-run"]').textContent()).toBe('none while paused');
    await shot('dashboard-source-paused');
    // The sync page's card says it too.
    await page.goto(url);
    expect(await page.locator('[data-source="erp-csv"] [data-field="pause-reason"]').textContent()).toBe(
      reason,
    );

    await page.goto(`${url}/sources/erp-csv`);
    await page.locator('#pause').getByRole('button', { name: 'Resume' }).click();
    await page.waitForURL((target) => !target.pathname.startsWith('/sources/'));
    expect(await paused.isPaused('erp-csv')).toBe(false);
    await page.goto(`${url}/sources/erp-csv`);
    expect(await page.locator('#pause').count()).toBe(0);
    expect(await page.locator('h1 [data-field="state"]').textContent()).not.toContain('paused');
  });
});
