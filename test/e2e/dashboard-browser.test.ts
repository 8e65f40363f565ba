import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signIn } from '../support/browser.js';
import { type BrowserDashboard, startBrowserDashboard } from '../support/dashboard-env.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import type { TestSandbox } from '../support/sandbox.js';

const USER = 'ops';
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;
const SCREENSHOT = join(tmpdir(), 'receivables-sync-dashboard.png');
const basicAuth = (password: string) => `Basic ${Buffer.from(`${USER}:${password}`).toString('base64')}`;

/**
 * The acceptance test of the dashboard: a first sync into the sandbox, then the worker daemon as
 * `worker` runs it (real Redis queue, BullMQ worker, the dashboard on loopback with credentials),
 * driven through Debian's Chromium by playwright-core.
 */
describe('the dashboard in a browser', () => {
  let dropDir: string;
  let sandbox: TestSandbox;
  let url: string;
  let browser: Browser;
  let dashboard: BrowserDashboard;

  beforeAll(async () => {
    dashboard = await startBrowserDashboard({
      name: 'dash-e2e',
      user: USER,
      password: PASSWORD,
      // A first pass (as `sync --once`): 3 accounts, 2 invoices, one naming an account that does not exist.
      firstDrop: (drop) => {
        dropCsv(
          drop,
          'accounts.csv',
          ACCOUNT_HEADER,
          range(1, 3).map((i) => accountRow(i)),
        );
        dropCsv(drop, 'invoices.csv', INVOICE_HEADER, [invoiceRow(1, 1), invoiceRow(2, 404)]);
      },
    });
    ({ dropDir, sandbox, url, browser } = dashboard);
  }, 60_000);

  afterAll(() => dashboard?.close());

  it('when a user signs in, presses Re-sync after a new drop, then the run finishes and the counts change on the page', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    try {
      const first = await page.goto(url);
      expect(first?.status()).toBe(401);
      await signIn(page, url, USER, PASSWORD);

      const source = page.locator('[data-source="erp-csv"]');
      await source.waitFor();
      expect(await source.locator('[data-field="records-account"]').textContent()).toBe('3');
      expect(await source.locator('[data-field="last-run-created"]').textContent()).toBe('4');
      expect(await source.locator('[data-field="last-run-failed"]').textContent()).toBe('1');
      const failure = page.locator('#failures tr[data-key="INV-2"]');
      await failure.waitFor();
      expect(await failure.textContent()).toContain('C-404');

      // New rows arrive; the user asks for a pass instead of waiting for the schedule.
      dropCsv(
        dropDir,
        'accounts-2.csv',
        ACCOUNT_HEADER,
        range(4, 5).map((i) => accountRow(i)),
      );
      await source.getByRole('button', { name: 'Re-sync', exact: true }).click();
      await page.getByText('Re-sync of erp-csv queued').waitFor();

      // The page refreshes itself: the worker's run shows up, finishes, and the counts change.
      await source.locator('[data-field="records-account"]', { hasText: /^5$/ }).waitFor({ timeout: 30_000 });
      await source
        .locator('[data-field="last-run-status"] [data-status="succeeded"]')
        .waitFor({ timeout: 30_000 });
      expect(await source.locator('[data-field="last-run-created"]').textContent()).toBe('2');
      expect(await page.locator('#runs tbody tr').count()).toBe(2);
      expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 5 });

      // One connection, one organization: no heading, one quota line, told by the worker (every 5 s).
      const quota = page.locator('[data-field="quota"][data-budget-status="ok"]');
      await quota.waitFor({ timeout: 20_000 });
      expect(await quota.textContent()).toMatch(
        /^API budget: [1-9]\d* \/ \d+ in the last \d+ s · none waiting$/,
      );
      expect(await page.locator('h3.group, h4.group').count()).toBe(0);

      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      const metrics = await (
        await fetch(`${url}/metrics`, { headers: { authorization: basicAuth(PASSWORD) } })
      ).text();
      expect(metrics).toContain(
        'receivables_sync_records_total{source="erp-csv",kind="account",outcome="created"} 2',
      );
      expect(metrics).toContain('receivables_sync_api_rate_limited_total 0');
    } finally {
      await context.close();
    }
  });

  it('when a user presses Test connection, then the checks of doctor show as a table, all passing', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    try {
      await signIn(page, url, USER, PASSWORD);
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.locator('#connection-test').waitFor();
      expect(await page.locator('[data-field="verdict"]').textContent()).toBe(
        'Every check passed: the setup is ready.',
      );
      for (const name of ['state DB', 'redis', 'api', 'discovery', 'token', 'organization', 'source erp-csv'])
        expect(await page.locator(`tr[data-check="${name}"]`).getAttribute('data-status'), name).toBe('ok');
      expect(await page.locator('tr[data-check="organization"]').textContent()).toContain(
        sandbox.organizationId,
      );
    } finally {
      await context.close();
    }
  });

  it('when a request comes without credentials, then the dashboard refuses it (401)', async () => {
    const anonymous = await fetch(`${url}/api/status`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic/);
    expect((await fetch(`${url}/`, { headers: { authorization: basicAuth('nope') } })).status).toBe(401);
    expect(
      (await fetch(`${url}/api/status`, { headers: { authorization: basicAuth(PASSWORD) } })).status,
    ).toBe(200);
  });
});
