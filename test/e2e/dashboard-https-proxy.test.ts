import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStandaloneDashboard } from '../../src/app/dashboard.js';
import type { LoadedConfig } from '../../src/config/load.js';
import type { RunningDashboard } from '../../src/dashboard/server.js';
import { CHROMIUM, launchChromium, signIn } from '../support/browser.js';
import { dashboardWorkerConfig } from '../support/dashboard-env.js';
import { type HttpsProxy, startHttpsProxy } from '../support/https-proxy.js';
import { dropSchema, uniqueSchema } from '../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';

const USER = 'ops';
const PASSWORD = `pw-${randomBytes(6).toString('hex')}`;

/** Run in each page before its own scripts (as a string: the tests compile without the DOM types). */
const COLLECT_VIOLATIONS = `window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) =>
  window.__violations.push(event.effectiveDirective + ' ' + event.blockedURI));`;

/** What a page does that the test watches: where it sent requests, and what its CSP refused. */
interface Watched {
  context: BrowserContext;
  requests: string[];
  violations: () => Promise<string[]>;
}

/**
 * Issue 4: the dashboard behind a TLS-terminating reverse proxy, in a real browser. `dashboard`
 * (the standalone command's wiring, with Redis: bull-board is mounted) listens on loopback with
 * `dashboard.trustProxy: [loopback]` from its configuration file; a local HTTPS proxy with a
 * self-signed certificate forwards to it as nginx would; Chromium signs in through the proxy.
 */
describe.skipIf(!existsSync(CHROMIUM))('the dashboard behind an HTTPS reverse proxy, in Chromium', () => {
  const schema = uniqueSchema('dash_tls');
  let dir: string;
  let sandbox: TestSandbox;
  let loaded: LoadedConfig;
  let dashboard: RunningDashboard;
  let proxy: HttpsProxy;
  let browser: Browser;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-dash-tls-'));
    sandbox = await startTestSandbox();
    loaded = await dashboardWorkerConfig({
      dir,
      dropDir: join(dir, 'drop'),
      schema,
      sandbox,
      user: USER,
      password: PASSWORD,
      yaml: 'dashboard:\n  trustProxy: [loopback]\n',
    });
    loaded.config.queue.prefix = `test-dash-tls-${randomBytes(4).toString('hex')}`;
    dashboard = await openStandaloneDashboard(loaded);
    proxy = await startHttpsProxy(dashboard.url);
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await dashboard?.close();
    await sandbox?.close();
    await dropSchema(schema);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function watchedContext(): Promise<Watched> {
    const context = await browser.newContext({ ignoreHTTPSErrors: true });
    const requests: string[] = [];
    context.on('request', (request) => requests.push(request.url()));
    // Collected in the page itself: every resource or inline code its CSP refused.
    await context.addInitScript({ content: COLLECT_VIOLATIONS });
    return {
      context,
      requests,
      violations: async () => {
        const seen = await Promise.all(context.pages().map((page) => page.evaluate('window.__violations')));
        return (seen as string[][]).flat();
      },
    };
  }

  it('when a user signs in through the proxy, then the sync page loads and the session cookie is Secure', async () => {
    expect(loaded.config.dashboard.trustProxy).toEqual(['loopback']);
    const { context, requests, violations } = await watchedContext();
    try {
      const page = await context.newPage();
      const consoleErrors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      await signIn(page, proxy.url, USER, PASSWORD);
      await page.waitForURL(`${proxy.url}/`);
      await page.locator('[data-source="erp-csv"]').waitFor();
      expect(await page.getByText('this request came from another site').count()).toBe(0);

      const cookies = await context.cookies(proxy.url);
      const session = cookies.find((c) => c.name === 'rs_dashboard_session');
      expect(session).toMatchObject({ secure: true, httpOnly: true, sameSite: 'Strict' });

      // bull-board through the same proxy: it renders under its CSP, with nothing refused.
      for (const path of ['/queues', '/queues/queue/sync']) {
        await page.goto(`${proxy.url}${path}`);
        await page.getByText('sync', { exact: true }).first().waitFor();
        await page.waitForLoadState('networkidle');
      }
      expect(await violations()).toEqual([]);
      expect(consoleErrors.filter((text) => /Content Security Policy/i.test(text))).toEqual([]);

      // No request left for another host (no Google Fonts, nothing but the proxy).
      expect(requests.length).toBeGreaterThan(5);
      const elsewhere = requests.filter((url) => !url.startsWith(`${proxy.url}/`));
      expect(elsewhere).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('when trustProxy is off, then the same sign-in is refused as from another site (what the setting fixes)', async () => {
    const untrusting = await openStandaloneDashboard({
      ...loaded,
      config: { ...loaded.config, dashboard: { ...loaded.config.dashboard, trustProxy: false } },
    });
    const plain = await startHttpsProxy(untrusting.url);
    const { context } = await watchedContext();
    try {
      const page = await context.newPage();
      await page.goto(`${plain.url}/`);
      await page.getByLabel('User').fill(USER);
      await page.getByLabel('Password').fill(PASSWORD);
      const [answer] = await Promise.all([
        page.waitForResponse(
          (res) => res.url() === `${plain.url}/login` && res.request().method() === 'POST',
        ),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      expect(answer.status()).toBe(403);
      await page.getByText('This request came from another site').waitFor();
      expect((await context.cookies(plain.url)).map((c) => c.name)).not.toContain('rs_dashboard_session');
    } finally {
      await context.close();
      await plain.close();
      await untrusting.close();
    }
  });
});
