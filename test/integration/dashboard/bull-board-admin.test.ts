import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { Redis } from 'ioredis';
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningDashboard, startDashboard } from '../../../src/dashboard/server.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { BullSyncQueues } from '../../../src/jobs/queues.js';
import { openQueueConnection } from '../../../src/jobs/redis-connection.js';
import { CHROMIUM, launchChromium } from '../../support/browser.js';
import { CREDENTIALS, openTestState, SOURCES, silentLogger } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

/** A signed-in browser: its session cookie, the page's CSRF token and the origin it sends. */
interface Browser {
  origin: string;
  cookie: string;
  token: string;
}

/**
 * Issue 10: bull-board's own write endpoints (pause, retry, clean, promote, remove, add, ...).
 * Over real HTTP (the dashboard listening), a real Redis and BullMQ queue.
 */
describe('bull-board queue administration (real HTTP, real Redis)', () => {
  let state: State;
  let connection: Redis;
  let queues: BullSyncQueues;
  let dashboard: RunningDashboard | undefined;

  beforeAll(async () => {
    state = await openTestState('dash_board_admin');
    connection = openQueueConnection({
      url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      logger: silentLogger,
    });
    queues = new BullSyncQueues({
      connection,
      settings: {
        prefix: `test-board-${randomBytes(4).toString('hex')}`,
        attempts: 1,
        backoffMs: 1000,
        keepCompleted: 10,
        keepFailed: 10,
      },
      logger: silentLogger,
    });
  });
  afterEach(async () => {
    await dashboard?.close();
    dashboard = undefined;
    await queues.queue.obliterate({ force: true });
  });
  afterAll(async () => {
    await queues.close();
    await connection.quit();
    await state.close();
  });

  async function open(queueAdmin?: boolean): Promise<Browser> {
    dashboard = await startDashboard(
      {
        sources: SOURCES,
        db: state.db,
        queues,
        credentials: CREDENTIALS,
        host: '127.0.0.1',
        clock: new ManualClock('2026-01-15T10:00:00Z'),
        logger: silentLogger,
        ...(queueAdmin === undefined ? {} : { queueAdmin }),
      },
      0,
    );
    return signIn(dashboard.url);
  }

  async function signIn(origin: string): Promise<Browser> {
    const signIn = await fetch(`${origin}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
      body: new URLSearchParams({ ...CREDENTIALS, next: '/' }),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const status = await fetch(`${origin}/api/status`, { headers: { cookie } });
    const { csrfToken } = (await status.json()) as { csrfToken: string };
    return { origin, cookie, token: csrfToken };
  }

  /** A bull-board API call as its UI makes it: same origin, the session cookie, JSON. */
  function board(
    b: Browser,
    method: string,
    path: string,
    headers: Record<string, string> = {},
    body?: unknown,
  ) {
    return fetch(`${b.origin}/queues/api${path}`, {
      method,
      headers: {
        cookie: b.cookie,
        origin: b.origin,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  const waitingJobs = async () => (await queues.queue.getJobs(['waiting'])).map((job) => job.id);

  it('by default, bull-board is read-only: pause, clean, remove and add are refused with 403 and nothing changes, reading still works', async () => {
    const b = await open();
    const { jobId } = await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });

    const pause = await board(b, 'PUT', '/queues/sync/pause');
    expect(pause.status).toBe(403);
    expect(await pause.json()).toMatchObject({ code: 'DASHBOARD_QUEUE_ADMIN_OFF' });
    expect(await queues.queue.isPaused()).toBe(false);

    // Even with the dashboard's own token: the switch is off.
    const withToken = await board(b, 'PUT', '/queues/sync/pause', { 'x-csrf-token': b.token });
    expect(withToken.status).toBe(403);
    expect(await queues.queue.isPaused()).toBe(false);

    expect((await board(b, 'PUT', '/queues/sync/clean/waiting')).status).toBe(403);
    expect((await board(b, 'PUT', `/queues/sync/${encodeURIComponent(jobId)}/clean`)).status).toBe(403);
    expect((await board(b, 'PUT', '/queues/pause')).status).toBe(403);
    const add = await board(b, 'POST', '/queues/sync/add', {}, { name: 'source-sync', data: {} });
    expect(add.status).toBe(403);
    expect(await waitingJobs()).toEqual([jobId]);
    expect(await queues.queue.isPaused()).toBe(false);

    const ui = await fetch(`${b.origin}/queues`, { headers: { cookie: b.cookie } });
    expect(ui.status).toBe(200);
    expect(ui.headers.getSetCookie().join()).not.toContain('XSRF-TOKEN');
    const list = await board(b, 'GET', '/queues?activeQueue=sync&status=waiting&page=1');
    expect(list.status).toBe(200);
    const { queues: shown } = (await list.json()) as { queues: any[] };
    const sync = shown.find((q) => q.name === 'sync');
    // What bull-board's UI reads to hide its buttons.
    expect(sync).toMatchObject({ readOnlyMode: true, allowRetries: false });
    expect(sync.jobs.map((job: any) => job.id)).toEqual([jobId]);
  });

  it('with queueAdmin: true, a write without the CSRF token (or with a wrong one) is refused with 403 and nothing changes', async () => {
    const b = await open(true);
    const { jobId } = await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });

    const pause = await board(b, 'PUT', '/queues/sync/pause');
    expect(pause.status).toBe(403);
    expect(await pause.json()).toMatchObject({ code: 'DASHBOARD_CSRF_REFUSED' });
    const forged = await board(b, 'PUT', '/queues/sync/pause', { 'x-xsrf-token': 'forged' });
    expect(forged.status).toBe(403);
    // The XSRF cookie alone (what a browser sends by itself) is not enough: the header is needed.
    const ui = await fetch(`${b.origin}/queues`, { headers: { cookie: b.cookie } });
    const xsrf = ui.headers
      .getSetCookie()
      .find((c) => c.startsWith('XSRF-TOKEN='))!
      .split(';')[0]!;
    const cookieOnly = await board(b, 'PUT', '/queues/sync/pause', { cookie: `${b.cookie}; ${xsrf}` });
    expect(cookieOnly.status).toBe(403);
    expect((await board(b, 'PUT', '/queues/sync/clean/waiting')).status).toBe(403);
    expect(await queues.queue.isPaused()).toBe(false);
    expect(await waitingJobs()).toEqual([jobId]);

    // Another session's token does not fit this session.
    const other = await signIn(b.origin);
    expect(other.token).not.toBe(b.token);
    expect((await board(b, 'PUT', '/queues/sync/pause', { 'x-xsrf-token': other.token })).status).toBe(403);
    expect(await queues.queue.isPaused()).toBe(false);
  });

  it('with queueAdmin: true, the token bull-board gets in its XSRF-TOKEN cookie lets the admin pause the queue and clean a job', async () => {
    const b = await open(true);
    const { jobId } = await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });

    // Opening bull-board gives its script the token, in the cookie axios copies into X-XSRF-TOKEN.
    const ui = await fetch(`${b.origin}/queues`, { headers: { cookie: b.cookie } });
    expect(ui.status).toBe(200);
    const setCookie = ui.headers.getSetCookie().find((c) => c.startsWith('XSRF-TOKEN='))!;
    expect(setCookie).toContain('Path=/queues');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).not.toContain('HttpOnly');
    const xsrf = setCookie.split(';')[0]!.slice('XSRF-TOKEN='.length);
    expect(xsrf).toBe(b.token);

    const list = await board(b, 'GET', '/queues?activeQueue=sync&status=waiting&page=1');
    const { queues: shown } = (await list.json()) as { queues: any[] };
    expect(shown.find((q) => q.name === 'sync')).toMatchObject({ readOnlyMode: false });

    const pause = await board(b, 'PUT', '/queues/sync/pause', { 'x-xsrf-token': xsrf });
    expect(pause.status).toBe(200);
    expect(await queues.queue.isPaused()).toBe(true);

    // A script uses the token of /api/status in the header of the dashboard's actions.
    const resume = await board(b, 'PUT', '/queues/sync/resume', { 'x-csrf-token': b.token });
    expect(resume.status).toBe(200);
    expect(await queues.queue.isPaused()).toBe(false);

    const remove = await board(b, 'PUT', `/queues/sync/${encodeURIComponent(jobId)}/clean`, {
      'x-xsrf-token': xsrf,
    });
    expect(remove.status).toBe(204);
    expect(await waitingJobs()).toEqual([]);
  });

  it('with queueAdmin: true, a write from another site is still refused by the Origin check, token or not', async () => {
    const b = await open(true);
    const res = await board(b, 'PUT', '/queues/sync/pause', {
      origin: 'https://evil.example',
      'x-xsrf-token': b.token,
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ code: 'DASHBOARD_ORIGIN_REFUSED' });
    expect(await queues.queue.isPaused()).toBe(false);
  });

  describe.skipIf(!existsSync(CHROMIUM))("in bull-board's own UI (Chromium)", () => {
    /** Signs in with the form, opens the sync queue in bull-board, returns what its menus offer. */
    async function openQueuePage(origin: string, run: (page: Page, menuItems: string[]) => Promise<void>) {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.goto(`${origin}/login`);
        await page.fill('input[name=user]', CREDENTIALS.user);
        await page.fill('input[name=password]', CREDENTIALS.password);
        await Promise.all([page.waitForURL(`${origin}/`), page.click('button[type=submit]')]);
        await page.goto(`${origin}/queues/queue/sync`);
        await page.getByText('source-sync', { exact: true }).first().waitFor();
        // The queue's own menu renders after its data arrives: wait for the page to settle, and for
        // each menu's items to show, so a slow machine reads every menu whole.
        await page.waitForLoadState('networkidle');
        const menuItems: string[] = [];
        for (const menu of await page.locator('button[aria-haspopup="menu"]').all()) {
          await menu.click();
          await page.getByRole('menuitem').first().waitFor();
          menuItems.push(...(await page.getByRole('menuitem').allInnerTexts()));
          await page.keyboard.press('Escape');
          await page.getByRole('menuitem').first().waitFor({ state: 'hidden' });
        }
        await run(page, menuItems);
      } finally {
        await browser.close();
      }
    }

    it('by default, the queue offers no Pause (nor any other write) to click', async () => {
      const b = await open();
      await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });
      await openQueuePage(b.origin, async (_page, menuItems) => {
        expect(menuItems).not.toContain('Pause');
        expect(menuItems).not.toContain('Empty');
      });
      expect(await queues.queue.isPaused()).toBe(false);
    });

    it('with queueAdmin: true, an admin clicks Pause and confirms, and the queue is paused', async () => {
      const b = await open(true);
      await queues.enqueueSourceSync('erp-csv', { trigger: 'manual' });
      await openQueuePage(b.origin, async (page, menuItems) => {
        expect(menuItems, 'the menus bull-board offers').toContain('Pause');
        await page.locator('button[aria-haspopup="menu"]').last().click();
        await page.getByRole('menuitem', { name: 'Pause' }).click();
        const answer = page.waitForResponse((res) => res.url().endsWith('/queues/api/queues/sync/pause'));
        await page.getByRole('button', { name: 'Confirm' }).click();
        expect((await answer).status()).toBe(200);
      });
      expect(await queues.queue.isPaused()).toBe(true);
    });
  });
});
