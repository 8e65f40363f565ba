import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../support/browser.js';
import { type BrowserDashboard, startBrowserDashboard } from '../support/dashboard-env.js';
import { ACCOUNT_HEADER, accountRow, dropCsv, range } from '../support/drop-data.js';
import type { TestSandbox } from '../support/sandbox.js';

const USER = 'ops';
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
/** Three engine batches of 500: the sandbox's latency makes each last a few seconds. */
const ROWS = 1500;
/** `npm run screenshots`: the pages are saved into docs/images/ for docs/operations.md. */
const SCREENSHOTS =
  process.env.SCREENSHOTS === '1' ? join(import.meta.dirname, '..', '..', 'docs', 'images') : null;

/**
 * A source's page in Chromium against the worker daemon (real Redis queue, BullMQ worker, Postgres,
 * the sandbox API answering each request after 30 ms): Re-sync, Cancel of the running pass, Pause
 * and Resume pressed there, each seen in effect. The cancelled pass stops between batches, its file
 * goes back to the drop folder, and the next pass syncs what was left without a duplicate.
 */
describe("a source's page in a browser: actions and cancel", () => {
  let dropDir: string;
  let sandbox: TestSandbox;
  let url: string;
  let dashboard: BrowserDashboard;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    dashboard = await startBrowserDashboard({
      name: 'dash-cancel',
      user: USER,
      password: PASSWORD,
      sandbox: { rateLimit: { quota: 100_000, windowSeconds: 60 }, faults: { latencyMs: 30 } },
    });
    ({ dropDir, sandbox, url } = dashboard);
    context = await dashboard.browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    // The actions that change much ask first (data-confirm): the user says yes.
    page.on('dialog', (dialog) => void dialog.accept());
    await signIn(page, url, USER, PASSWORD);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await dashboard?.close();
  });

  const actions = () => page.locator('#source-actions');
  const shot = async (name: string) => {
    if (SCREENSHOTS) await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  };
  /** Reloads the source's page (or `path`) until `locator` is there (it does not refresh itself). */
  const reloadUntil = async (locator: () => Locator, timeoutMs = 30_000, path = '/sources/erp-csv') => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      await page.goto(`${url}${path}`);
      if ((await locator().count()) > 0) return;
      if (Date.now() > until) throw new Error(`still not there after ${timeoutMs} ms`);
      await page.waitForTimeout(200);
    }
  };
  const accountsInService = async () =>
    ((await sandbox.admin('GET', '/stats')) as { accounts: number }).accounts;

  it('when a user presses Re-sync then Cancel on the source page, then the pass stops between batches, its file is back in the drop folder, and the next Re-sync syncs the rest without a duplicate', async () => {
    dropCsv(
      dropDir,
      'accounts.csv',
      ACCOUNT_HEADER,
      range(1, ROWS).map((i) => accountRow(i)),
    );
    await page.goto(`${url}/sources/erp-csv`);
    await actions().getByRole('button', { name: 'Re-sync', exact: true }).click();
    await page.getByText('Re-sync of erp-csv queued').waitFor();
    // The answer comes back to the source's page.
    expect(new URL(page.url()).pathname).toBe('/sources/erp-csv');

    // The pass runs: Cancel shows; the user presses it.
    await reloadUntil(() => actions().getByRole('button', { name: 'Cancel run' }));
    await shot('dashboard-source-running');
    await actions().getByRole('button', { name: 'Cancel run' }).click();
    await page.getByText(/Cancel of run #\d+ of erp-csv asked/).waitFor();
    const cancelled = () =>
      page.locator('#source-runs tbody tr').first().locator('[data-status="cancelled"]');
    await reloadUntil(cancelled);
    const firstRun = await page.locator('#source-runs tbody tr').first().getAttribute('data-run');

    // Stopped between batches: some rows synced, not all; the file is back, not archived.
    const synced = await accountsInService();
    // (0 when Cancel came before the first batch: the fence is asked before each one.)
    expect(synced).toBeGreaterThanOrEqual(0);
    expect(synced).toBeLessThan(ROWS);
    expect(synced % 500).toBe(0);
    expect(existsSync(join(dropDir, 'accounts.csv'))).toBe(true);
    expect(
      existsSync(join(dropDir, 'archive')) ? readdirSync(join(dropDir, 'archive'), { recursive: true }) : [],
    ).toEqual([]);
    expect(await page.locator('#waiting-files tr[data-waiting-file="accounts.csv"]').count()).toBe(1);

    // The run's page: cancelled, by whom, and its log says so.
    await page.goto(`${url}/runs/${firstRun}`);
    expect(await page.locator('[data-field="run-status"]').textContent()).toBe('cancelled');
    expect(await page.locator('[data-field="error"]').textContent()).toContain(
      `cancelled by ${USER} from the dashboard`,
    );
    expect(
      await page.locator('#run-counts tr[data-kind="accounts"] [data-field="created"]').textContent(),
    ).toBe(String(synced));
    // Its log (written within a second or two) says what happened, not only "unit done".
    await reloadUntil(
      () => page.locator('#run-log-table tr', { hasText: 'pass cancelled: stopped before its next batch' }),
      10_000,
      `/runs/${firstRun}`,
    );
    expect(
      await page.locator('#run-log-table tr', { hasText: 'pass cancelled: unit released' }).count(),
    ).toBe(1);
    await shot('dashboard-run-cancelled');

    // The next pass takes the file again: the rest is created, what was synced is unchanged.
    await page.goto(`${url}/sources/erp-csv`);
    await actions().getByRole('button', { name: 'Re-sync', exact: true }).click();
    await page.getByText('Re-sync of erp-csv queued').waitFor();
    await reloadUntil(
      () => page.locator('#source-runs tbody tr').first().locator('[data-status="succeeded"]'),
      60_000,
    );
    expect(await accountsInService()).toBe(ROWS);
    const last = page.locator('#source-runs tbody tr').first();
    expect(await last.locator('td.num').allTextContents()).toEqual([
      String(ROWS - synced),
      '0',
      String(synced),
      '0',
    ]);
    expect(existsSync(join(dropDir, 'accounts.csv'))).toBe(false);
    expect(await page.locator('[data-field="records-account"]').textContent()).toBe(String(ROWS));
  }, 120_000);

  it('when a user presses Pause then Resume on the source page, then the source is paused (its Re-sync off) and active again', async () => {
    await page.goto(`${url}/sources/erp-csv`);
    await actions().getByRole('button', { name: 'Pause' }).click();
    await page.getByText('erp-csv is paused').waitFor();
    expect(new URL(page.url()).pathname).toBe('/sources/erp-csv');
    expect(await page.locator('h1 [data-field="state"]').textContent()).toBe('paused');
    expect(await actions().getByRole('button', { name: 'Re-sync', exact: true }).isDisabled()).toBe(true);
    await shot('dashboard-source-actions-paused');

    await actions().getByRole('button', { name: 'Resume' }).click();
    await page.getByText('erp-csv is resumed').waitFor();
    expect(await page.locator('h1 [data-field="state"]').textContent()).toBe('active');
    expect(await actions().getByRole('button', { name: 'Re-sync', exact: true }).isEnabled()).toBe(true);
  });
});
