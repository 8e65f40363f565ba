import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
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
/** `SCREENSHOTS=1`: the preview page is saved into docs/images/ for docs/dashboard.md. */
const SCREENSHOTS =
  process.env.SCREENSHOTS === '1' ? join(import.meta.dirname, '..', '..', 'docs', 'images') : null;

/** Two invoices that read, one whose total is no amount. */
const MARCH = `${[
  INVOICE_HEADER,
  invoiceRow(1, 1),
  invoiceRow(2, 2, { total: '12O.00' }),
  invoiceRow(3, 3, { paid: '50.00' }),
].join('\n')}\n`;

/**
 * The upload of a file in Chromium, against the worker daemon (real Redis queue, BullMQ worker,
 * Postgres, the sandbox API): chosen in the page's file input, previewed (its rows, the row that
 * would fail and why, the plan), then Sync now: the worker's pass takes it from the drop folder and
 * the invoices reach the sandbox. A second file dropped on the page's drop zone is discarded.
 */
describe('an upload through the dashboard in a browser', () => {
  let dropDir: string;
  let sandbox: TestSandbox;
  let url: string;
  let browser: Browser;
  let dashboard: BrowserDashboard;

  beforeAll(async () => {
    dashboard = await startBrowserDashboard({
      name: 'dash-upload',
      user: USER,
      password: PASSWORD,
      // A first pass: the 3 accounts the uploaded invoices name.
      firstDrop: (drop) =>
        dropCsv(
          drop,
          'accounts.csv',
          ACCOUNT_HEADER,
          range(1, 3).map((i) => accountRow(i)),
        ),
    });
    ({ dropDir, sandbox, url, browser } = dashboard);
  }, 60_000);

  afterAll(() => dashboard?.close());

  it('when a user uploads a file, then the preview names the row that would fail, and Sync now syncs the others into the sandbox', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    try {
      await signIn(page, url, USER, PASSWORD);
      await page.goto(`${url}/sources/erp-csv`);
      await page.getByRole('link', { name: 'Upload a file' }).click();
      await page.locator('[data-upload-page="erp-csv"]').waitFor();

      await page
        .locator('input[type="file"]')
        .setInputFiles({ name: 'invoices-march.csv', mimeType: 'text/csv', buffer: Buffer.from(MARCH) });
      await page.getByRole('button', { name: 'Upload and preview' }).click();

      // The preview: how the rows read, the row that would fail and why, the plan.
      await page.locator('h1[data-upload]').waitFor();
      expect(await page.locator('h1[data-upload]').textContent()).toContain('invoices-march.csv');
      const rows = await page.locator('#preview-rows tbody').textContent();
      expect(rows).toContain('invoice INV-1 (number F-00001, account C-1): total 120.00, tax 20.00');
      expect(rows).toContain('issued 2026-01-10, due 2026-02-09');
      const failed = page.locator('#preview-failures tr[data-key="INV-2"]');
      expect(await failed.getAttribute('data-failure-line')).toBe('3');
      expect(await failed.textContent()).toMatch(/totalAmount.*12O\.00/);
      const invoices = page.locator('#preview-counts tr[data-kind="invoices"]');
      expect(await invoices.locator('[data-field="created"]').textContent()).toBe('2');
      expect(await invoices.locator('[data-field="failed"]').textContent()).toBe('1');
      expect(await page.locator('#preview-plan tr[data-key="INV-3"]').getAttribute('data-operation')).toBe(
        'create',
      );
      expect(await sandbox.admin('GET', '/stats')).toMatchObject({ invoices: 0 });
      if (SCREENSHOTS)
        await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-upload-preview.png'), fullPage: true });

      // Sync now: into the drop folder, a pass queued; the worker takes it like any dropped file.
      await page.getByRole('button', { name: 'Sync now' }).click();
      await page.getByText('invoices-march.csv is in the drop folder of erp-csv').waitFor();
      await expect
        .poll(async () => (await sandbox.admin('GET', '/stats')) as Record<string, number>, {
          timeout: 30_000,
        })
        .toMatchObject({ accounts: 3, invoices: 2 });
      await expect
        .poll(() => existsSync(join(dropDir, 'invoices-march.csv')), { timeout: 30_000 })
        .toBe(false);
      expect(readdirSync(join(dropDir, '.uploads'))).toEqual([]);
      await expect
        .poll(
          async () => {
            await page.reload();
            return page.locator('#source-runs tbody tr').first().textContent();
          },
          { timeout: 30_000 },
        )
        .toMatch(/manual.*partial|manual.*succeeded/);
      expect(await page.locator('#source-runs tbody tr').first().locator('td.num').last().textContent()).toBe(
        '1',
      );
    } finally {
      await context.close();
    }
  });

  it('when a file is dropped on the drop zone, then it is previewed, and Discard deletes it', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await context.newPage();
    try {
      await signIn(page, url, USER, PASSWORD);
      await page.goto(`${url}/sources/erp-csv/upload`);
      await page.locator('[data-dropzone]').waitFor();
      // What a browser hands the page when a file is dropped on it: a DataTransfer holding the file.
      const dropped = `${INVOICE_HEADER}\n${invoiceRow(9, 1)}\n`;
      const data = await page.evaluateHandle(
        `(() => { const d = new DataTransfer(); d.items.add(new File([${JSON.stringify(dropped)}], 'invoices-april.csv', { type: 'text/csv' })); return d; })()`,
      );
      await page.locator('[data-dropzone]').dispatchEvent('drop', { dataTransfer: data });
      await page.locator('h1[data-upload]').waitFor();
      expect(await page.locator('#preview-plan tr[data-key="INV-9"]').getAttribute('data-operation')).toBe(
        'create',
      );

      await page.getByRole('button', { name: 'Discard' }).click();
      await page.getByText('Upload invoices-april.csv discarded').waitFor();
      expect(readdirSync(join(dropDir, '.uploads'))).toEqual([]);
      expect(await sandbox.admin('GET', '/stats')).toMatchObject({ invoices: 2 });
    } finally {
      await context.close();
    }
  });
});
