import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp } from '../../../src/dashboard/app.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { OPEN_REDIRECTS } from '../../support/open-redirects.js';
import { CREDENTIALS, formPost, openTestState, SOURCES, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

/** `next` as it travels in a query string: percent-encoded, as a crafted link would carry it. */
const inQuery = (next: string) => `/login?next=${encodeURIComponent(next)}`;

describe('where the sign-in sends the browser afterwards (no open redirect)', () => {
  let state: State;
  beforeAll(async () => {
    state = await openTestState('dash_redirect');
  });
  afterAll(async () => {
    await state.close();
  });

  it('when /login?next= names another site in any disguise, then the redirect goes to /', async () => {
    // Without credentials, GET /login redirects at once: the quickest way to see the Location.
    const open = buildDashboardApp({
      sources: SOURCES,
      db: state.db,
      credentials: undefined,
      host: '127.0.0.1',
      clock: new ManualClock(),
      logger: silentLogger,
    });
    const literal = ['/%09/host', '/%5C/evil.example', '%2F%2Fevil.example', '/%2F%2Fevil.example'];
    for (const url of [...OPEN_REDIRECTS.map(inQuery), ...literal.map((raw) => `/login?next=${raw}`)]) {
      const res = await open.inject({ url });
      expect(res.statusCode, url).toBe(303);
      const location = String(res.headers.location);
      expect(location, url).toMatch(/^\/(?![/\\])/);
      expect(location, url).not.toMatch(/[\s\\]/);
      expect(new URL(location, 'http://127.0.0.1:3000').origin, url).toBe('http://127.0.0.1:3000');
    }
    expect((await open.inject({ url: '/login?next=/%09/host' })).headers.location).toBe('/');
    expect((await open.inject({ url: '/login?next=/sources/erp-csv' })).headers.location).toBe(
      '/sources/erp-csv',
    );
  });

  it('when the sign-in form carries a disguised next, then it is not echoed into the form and the redirect goes to /', async () => {
    const app = testApp(state);
    const form = await app.inject({ url: inQuery('/\t/evil.example') });
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="next" value="/"');
    for (const next of OPEN_REDIRECTS) {
      const res = await formPost(app, '/login', { ...CREDENTIALS, next });
      expect(res.statusCode, JSON.stringify(next)).toBe(303);
      expect(res.headers.location, JSON.stringify(next)).toBe('/');
    }
    const kept = await formPost(app, '/login', { ...CREDENTIALS, next: '/queues?x=1' });
    expect(kept.headers.location).toBe('/queues?x=1');
  });
});
