import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp } from '../../../src/dashboard/app.js';
import { resolveCredentials } from '../../../src/dashboard/credentials.js';
import { DashboardConfigError } from '../../../src/dashboard/errors.js';
import { ManualClock } from '../../../src/domain/clock.js';
import {
  basic,
  CREDENTIALS,
  csrfTokenOf,
  formPost,
  openTestState,
  SOURCES,
  silentLogger,
  testApp,
} from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

describe('dashboard sign-in', () => {
  let state: State;
  beforeAll(async () => {
    state = await openTestState('dash_auth');
  });
  afterAll(async () => {
    await state.close();
  });

  it('when a request carries no credentials, then it is refused with 401 (Basic challenge for scripts, the sign-in form for browsers)', async () => {
    const app = testApp(state);
    for (const url of ['/', '/api/status', '/partials/status', '/metrics']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(401);
    }
    const script = await app.inject({ url: '/api/status' });
    expect(script.headers['www-authenticate']).toMatch(/^Basic realm=/);
    expect(script.json()).toMatchObject({ code: 'DASHBOARD_UNAUTHORIZED' });
    const browser = await app.inject({ url: '/?x=1', headers: { accept: 'text/html' } });
    expect(browser.headers['www-authenticate']).toBeUndefined();
    expect(browser.body).toContain('<form method="post" action="/login"');
    expect(browser.body).toContain('value="/?x=1"');
    expect(browser.body).not.toContain('erp-csv');
  });

  it('when HTTP Basic credentials are right, then the page is served; when wrong, then 401', async () => {
    const app = testApp(state);
    const ok = await app.inject({ url: '/', headers: { authorization: basic() } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('erp-csv');
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(ok.headers['content-security-policy']).toContain("script-src 'self'");
    for (const [user, password] of [
      ['ops', 'wrong'],
      ['admin', CREDENTIALS.password],
      ['', ''],
    ] as const) {
      const res = await app.inject({ url: '/', headers: { authorization: basic(user, password) } });
      expect(res.statusCode).toBe(401);
    }
  });

  it('when the sign-in form is posted with the right credentials, then an HttpOnly SameSite=Strict session opens, and sign-out closes it', async () => {
    const app = testApp(state);
    const wrong = await formPost(app, '/login', { user: 'ops', password: 'nope', next: '/' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong user or password.');
    expect(wrong.headers['set-cookie']).toBeUndefined();

    const signIn = await formPost(app, '/login', { ...CREDENTIALS, next: '/?from=login' });
    expect(signIn.statusCode).toBe(303);
    expect(signIn.headers.location).toBe('/?from=login');
    const setCookie = String(signIn.headers['set-cookie']);
    expect(setCookie).toMatch(/^rs_dashboard_session=[\w-]{40,};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    const cookie = setCookie.split(';')[0]!;

    const page = await app.inject({ url: '/', headers: { cookie, accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('signed in as <b>ops</b>');

    const token = await csrfTokenOf(app, { cookie });
    const signOut = await formPost(app, '/logout', { _csrf: token }, { cookie });
    expect(signOut.statusCode).toBe(303);
    expect(String(signOut.headers['set-cookie'])).toContain('Max-Age=0');
    const after = await app.inject({ url: '/api/status', headers: { cookie } });
    expect(after.statusCode).toBe(401);
  });

  it('when the sign-in asks to go elsewhere than this dashboard, then it goes to /', async () => {
    const app = testApp(state);
    for (const next of ['https://evil.example/', '//evil.example/', '/\\evil.example']) {
      const res = await formPost(app, '/login', { ...CREDENTIALS, next });
      expect(res.headers.location).toBe('/');
    }
  });

  it('when a session expires, then its cookie no longer signs in', async () => {
    const clock = new ManualClock('2026-01-15T10:00:00Z');
    const app = testApp(state, { clock, sessionTtlMs: 60_000 });
    const signIn = await formPost(app, '/login', { ...CREDENTIALS, next: '/' });
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    expect((await app.inject({ url: '/api/status', headers: { cookie } })).statusCode).toBe(200);
    clock.advance(61_000);
    expect((await app.inject({ url: '/api/status', headers: { cookie } })).statusCode).toBe(401);
  });

  it('when the sign-in form is posted from another site, then it is refused (Origin check)', async () => {
    const app = testApp(state);
    const res = await formPost(
      app,
      '/login',
      { ...CREDENTIALS, next: '/' },
      { origin: 'https://evil.example' },
    );
    expect(res.statusCode).toBe(403);
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('when no credentials are configured, then a host beyond loopback is refused at start, and loopback serves with a warning', async () => {
    const deps = {
      sources: SOURCES,
      db: state.db,
      credentials: undefined,
      clock: new ManualClock(),
      logger: silentLogger,
    };
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'dashboard.example.com']) {
      expect(() => buildDashboardApp({ ...deps, host })).toThrow(DashboardConfigError);
      expect(() => resolveCredentials({ user: undefined, password: undefined, host })).toThrow(
        /DASHBOARD_USER and DASHBOARD_PASSWORD/,
      );
    }
    expect(() => resolveCredentials({ user: 'ops', password: undefined, host: '127.0.0.1' })).toThrow(
      expect.objectContaining({ code: 'DASHBOARD_CREDENTIALS_INCOMPLETE' }),
    );
    expect(resolveCredentials({ user: 'ops', password: 'pw', host: '0.0.0.0' })).toEqual({
      user: 'ops',
      password: 'pw',
    });
    expect(() => buildDashboardApp({ ...deps, host: '0.0.0.0', credentials: CREDENTIALS })).not.toThrow();

    const app = buildDashboardApp({ ...deps, host: '127.0.0.1' });
    const page = await app.inject({ url: '/', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('open to anyone on this machine');
    // A DNS-rebinding page (another name resolving to 127.0.0.1) is not answered.
    const rebound = await app.inject({ url: '/api/status', headers: { host: 'evil.example:3000' } });
    expect(rebound.statusCode).toBe(403);
    expect(rebound.json()).toMatchObject({ code: 'DASHBOARD_HOST_REFUSED' });
    expect((await app.inject({ url: '/api/status', headers: { host: '127.0.0.1:3000' } })).statusCode).toBe(
      200,
    );
  });

  it('when the probes are called without credentials, then /healthz and /readyz answer, /metrics does not', async () => {
    const app = testApp(state);
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    expect((await app.inject({ url: '/metrics' })).statusCode).toBe(401);
    expect((await app.inject({ url: '/metrics', headers: { authorization: basic() } })).statusCode).toBe(200);
  });

  it('when a readiness check fails, then /readyz answers 503 naming it', async () => {
    const app = testApp(state, {
      readiness: [{ name: 'redis', check: async () => Promise.reject(new Error('ECONNREFUSED')) }],
    });
    const res = await app.inject({ url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ status: 'not ready', checks: { database: 'ok', redis: 'failed' } });
  });
});
