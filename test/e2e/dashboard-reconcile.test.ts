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
const SCREENSHOT = join(tmpdir(), 'receivables-sync-reconcile.png');
const basicAuth = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/**
 * Reconciliation on the dashboard, in Debian's Chromium: after a sync, an account is deleted on
 * the service; "Reconcile now" on the source page queues the job the worker runs (real Redis,
 * BullMQ, Postgres, the sandbox over HTTP); the card shows the drift, the details page names the
 * account, `/metrics` has the gauge; "Reconcile and repair" re-creates it.
 */
describe('reconciliation on the dashboard, in a browser', () => {
  let sandbox: TestSandbox;
  let url: string;
  let browser: Browser;
  let dashboard: BrowserDashboard;

  beforeAll(async () => {
    dashboard = await startBrowserDashboard({
      name: 'reconcile-e2e',
      user: USER,
      password: PASSWORD,
      firstDrop: (drop) => {
        dropCsv(
          drop,
          'accounts.csv',
          ACCOUNT_HEADER,
          range(1, 3).map((i) => accountRow(i)),
        );
        dropCsv(drop, 'invoices.csv', INVOICE_HEADER, [invoiceRow(1, 1)]);
      },
    });
    ({ sandbox, url, browser } = dashboard);
  }, 60_000);

  afterAll(() => dashboard?.close());

  const metricsText = async () =>
    (await fetch(`${url}/metrics`, { headers: { authorization: basicAuth } })).text();

  it('when an account is deleted on the service and the user presses Reconcile now, then the page shows the drift and its details name the account', async () => {
    // Before any reconciliation: sampled at 0, the timestamp at 0 (never).
    const before = await metricsText();
    expect(before).toContain(
      'receivables_sync_reconcile_drift{source="erp-csv",category="missing",kind="account"} 0',
    );
    expect(before).toContain('receivables_sync_reconcile_last_timestamp_seconds{source="erp-csv"} 0');

    const accounts = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, filters: 'source:isNotEmpty', first: 100 },
    });
    const c2 = (accounts.body.nodes as any[]).find((a) => a.source.sourceId === 'C-2');
    expect((await sandbox.call('DELETE', `/accounts/${c2.id}`)).status).toBe(204);

    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    try {
      await signIn(page, url, USER, PASSWORD);
      await page.goto(`${url}/sources/erp-csv`);
      const card = page.locator('#reconciliation');
      expect(await card.locator('[data-field="reconcile-none"]').textContent()).toBe('Never reconciled.');
      await card.getByRole('button', { name: 'Reconcile now', exact: true }).click();
      await page.getByText('Reconciliation of erp-csv queued').waitFor();
      expect(new URL(page.url()).pathname).toBe('/sources/erp-csv');

      // The worker runs it between passes; the card shows it once stored.
      const deadline = Date.now() + 30_000;
      while ((await card.locator('[data-reconciliation] [data-status="done"]').count()) === 0) {
        if (Date.now() > deadline) throw new Error('no reconciliation shown within 30 s');
        await page.waitForTimeout(300);
        await page.reload();
      }
      expect(await card.locator('[data-field="reconcile-trigger"]').textContent()).toBe('dashboard');
      expect(await card.locator('[data-field="reconcile-mode"]').textContent()).toBe('report only');
      expect(await card.locator('[data-count="missing-account"]').textContent()).toBe('1');
      expect(await card.locator('[data-count="changed-invoice"]').textContent()).toBe('0');
      expect(await card.locator('[data-field="reconcile-drift"]').textContent()).toBe('1');
      expect(Number(await card.locator('[data-field="reconcile-requests"]').textContent())).toBeGreaterThan(
        0,
      );

      await card.locator('[data-link="reconciliation"]').click();
      await page.locator('[data-reconciliation-page]').waitFor();
      const item = page.locator('#reconcile-items tr[data-category="missing"]');
      expect(await item.count()).toBe(1);
      expect(await item.textContent()).toContain('C-2');
      expect(await item.textContent()).toContain(c2.id);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      // The overview has the drift left per source, linked to the same details.
      await page.goto(url);
      const drift = page.locator('[data-source="erp-csv"] [data-field="drift-left"]');
      expect(await drift.textContent()).toBe('1');
      await drift.click();
      await page.locator('#reconcile-items tr[data-category="missing"]').waitFor();

      const metrics = await metricsText();
      expect(metrics).toContain(
        'receivables_sync_reconcile_drift{source="erp-csv",category="missing",kind="account"} 1',
      );
      expect(metrics).toContain(
        'receivables_sync_reconcile_drift{source="erp-csv",category="orphan",kind="invoice"} 0',
      );
      expect(metrics).toContain('receivables_sync_reconcile_drift_left{source="erp-csv"} 1');
      const at = Number(
        /receivables_sync_reconcile_last_timestamp_seconds\{source="erp-csv"\} (\S+)/.exec(metrics)?.[1],
      );
      expect(Math.abs(at - Date.now() / 1000)).toBeLessThan(120);

      // Then the repair: the account is re-created and the drift left is 0.
      await page.goto(`${url}/sources/erp-csv`);
      await card.getByRole('button', { name: 'Reconcile and repair' }).click();
      await page.getByText('Reconciliation and repair of erp-csv queued').waitFor();
      while (
        (await card.locator('[data-field="reconcile-mode"]', { hasText: 'with repair' }).count()) === 0 ||
        (await card.locator('[data-reconciliation] [data-status="done"]').count()) === 0
      ) {
        if (Date.now() > deadline + 30_000) throw new Error('no repair shown within 30 s');
        await page.waitForTimeout(300);
        await page.reload();
      }
      expect(await card.locator('[data-field="reconcile-drift"]').textContent()).toBe('0');
      // What the repair did, in the words the CLI says it, not the repair's internal keys.
      const lastLine = await card.locator('dd', { hasText: 'repaired:' }).textContent();
      expect(lastLine).toContain('repaired: 1 re-created or adopted again on the service');
      expect(lastLine).not.toMatch(/recreatedOrAdopted|recordedAsFailure/);
      expect(await sandbox.admin('GET', '/stats')).toMatchObject({ accounts: 3 });
      expect(await metricsText()).toContain('receivables_sync_reconcile_drift_left{source="erp-csv"} 0');
    } finally {
      await context.close();
    }
  }, 90_000);
});
