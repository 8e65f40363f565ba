import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BULL_BOARD_CSP } from '../../../src/dashboard/bull-board-page.js';
import { BullSyncQueues } from '../../../src/jobs/queues.js';
import { openQueueConnection } from '../../../src/jobs/redis-connection.js';
import { basic, openTestState, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

/** An absolute or protocol-relative URL: anything a page could load from another origin. */
const EXTERNAL_URL = /(?:\b[a-z][a-z0-9+.-]*:)?\/\/[a-z0-9.-]+/gi;

describe("bull-board's page as the dashboard serves it (real Redis)", () => {
  let state: State;
  let connection: Redis;
  let queues: BullSyncQueues;

  beforeAll(async () => {
    state = await openTestState('dash_board_page');
    connection = openQueueConnection({
      url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      logger: silentLogger,
    });
    queues = new BullSyncQueues({
      connection,
      settings: {
        prefix: `test-board-page-${randomBytes(4).toString('hex')}`,
        attempts: 1,
        backoffMs: 1000,
        keepCompleted: 10,
        keepFailed: 10,
      },
      logger: silentLogger,
    });
  });
  afterAll(async () => {
    await queues.queue.obliterate({ force: true });
    await queues.close();
    await connection.quit();
    await state.close();
  });

  it('when bull-board is opened, then its page has a same-origin CSP and links nothing on another origin (no Google Fonts)', async () => {
    const app = testApp(state, { queues });
    for (const url of ['/queues', '/queues/queue/sync']) {
      const res = await app.inject({ url, headers: { authorization: basic(), accept: 'text/html' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toBe(BULL_BOARD_CSP);
      expect(res.body).toContain('<div id="root">');
      expect(res.body).toMatch(/<link href="static\/css\/main\.[0-9a-f]+\.css" rel="stylesheet">/);
      expect(res.body).not.toMatch(/googleapis|gstatic/);
      expect(res.body.match(EXTERNAL_URL), url).toBeNull();
      expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.body));
    }
    const csp = BULL_BOARD_CSP.split('; ');
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(BULL_BOARD_CSP).not.toMatch(/unsafe-eval|https?:|\*/);

    // Its API answers carry the policy too; a stranger gets the sign-in page under the pages' own.
    const api = await app.inject({ url: '/queues/api/queues', headers: { authorization: basic() } });
    expect(api.statusCode).toBe(200);
    expect(api.headers['content-security-policy']).toBe(BULL_BOARD_CSP);
    const stranger = await app.inject({ url: '/queues', headers: { accept: 'text/html' } });
    expect(stranger.statusCode).toBe(401);
    expect(stranger.headers['content-security-policy']).toContain("style-src 'self';");
  });

  it('when any bull-board page is opened, then a link back to the dashboard is in sight, not only in its links menu', async () => {
    const app = testApp(state, { queues });
    for (const url of ['/queues', '/queues/queue/sync']) {
      const res = await app.inject({ url, headers: { authorization: basic(), accept: 'text/html' } });
      expect(res.body, url).toMatch(
        /<body[^>]*>\s*<a href="\/" id="back-to-dashboard"[^>]*>&larr; Sync dashboard<\/a>/,
      );
    }
  });
});
