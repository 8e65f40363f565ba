import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboardApp } from '../../../src/dashboard/app.js';
import type { DashboardDeps } from '../../../src/dashboard/deps.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { basic, CREDENTIALS, openTestState, SOURCES, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

/** What nginx, Caddy or Traefik send on for a browser at https://dash.example.com. */
const FORWARDED = {
  host: '127.0.0.1:3000',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'dash.example.com',
  'x-forwarded-for': '198.51.100.23',
};

/** The sign-in form posted by a browser on `origin`, through the proxy (inject's peer: 127.0.0.1). */
function signInThroughProxy(
  app: ReturnType<typeof testApp>,
  origin: string,
  headers: Record<string, string> = FORWARDED,
) {
  return app.inject({
    method: 'POST',
    url: '/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin, ...headers },
    payload: new URLSearchParams({ ...CREDENTIALS, next: '/' }).toString(),
  });
}

describe('the dashboard behind a TLS-terminating proxy (dashboard.trustProxy)', () => {
  let state: State;
  beforeAll(async () => {
    state = await openTestState('dash_proxy');
  });
  afterAll(async () => {
    await state.close();
  });

  it('when the proxy is trusted, then the browser signs in on its https origin and the session cookie is Secure', async () => {
    for (const trustProxy of [true, ['127.0.0.1'], ['loopback'], ['127.0.0.0/8']]) {
      const app = testApp(state, { trustProxy });
      const res = await signInThroughProxy(app, 'https://dash.example.com');
      expect(res.statusCode, JSON.stringify(trustProxy)).toBe(303);
      const cookie = String(res.headers['set-cookie']);
      expect(cookie).toMatch(/^rs_dashboard_session=/);
      expect(cookie).toContain('; Secure');
      // The browser's origin with its default port spelled out is the same origin.
      const explicitPort = await signInThroughProxy(app, 'https://dash.example.com', {
        ...FORWARDED,
        'x-forwarded-host': 'dash.example.com:443',
      });
      expect(explicitPort.statusCode).toBe(303);
    }
  });

  it('when the proxy is trusted, then a post from another site is still refused, whatever it forwards', async () => {
    const app = testApp(state, { trustProxy: ['127.0.0.1'] });
    const res = await signInThroughProxy(app, 'https://evil.example');
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'DASHBOARD_ORIGIN_REFUSED' });
    const downgraded = await signInThroughProxy(app, 'http://dash.example.com');
    expect(downgraded.statusCode).toBe(403);
  });

  it('when trustProxy is off (the default) or names another peer, then forwarded headers are ignored: a forged X-Forwarded-Host does not pass the Origin check', async () => {
    for (const overrides of [
      {},
      { trustProxy: false },
      { trustProxy: ['10.0.0.1'] },
    ] as Partial<DashboardDeps>[]) {
      const app = testApp(state, overrides);
      const forged = await signInThroughProxy(app, 'https://evil.example', {
        ...FORWARDED,
        'x-forwarded-host': 'evil.example',
      });
      expect(forged.statusCode).toBe(403);
      expect(forged.json()).toMatchObject({ code: 'DASHBOARD_ORIGIN_REFUSED' });
      // The documented setup without trustProxy: the origin the browser sees is not the dashboard's.
      expect((await signInThroughProxy(app, 'https://dash.example.com')).statusCode).toBe(403);
    }
  });

  it('when trustProxy is off, then a forged X-Forwarded-Proto: https does not mark the cookie Secure', async () => {
    const app = testApp(state);
    const res = await signInThroughProxy(app, 'http://localhost:80', {
      host: 'localhost:80',
      'x-forwarded-proto': 'https',
    });
    expect(res.statusCode).toBe(303);
    expect(String(res.headers['set-cookie'])).not.toContain('Secure');
  });

  it('when the proxy is trusted, then the sign-in back-off counts the client of X-Forwarded-For, not the proxy', async () => {
    const clock = new ManualClock('2026-01-15T10:00:00Z');
    const asked = (app: ReturnType<typeof testApp>, client: string, password: string) =>
      app.inject({
        url: '/api/status',
        headers: { authorization: basic('ops', password), 'x-forwarded-for': client },
      });
    const trusted = testApp(state, { trustProxy: ['127.0.0.1'], clock, wait: async () => {} });
    await Promise.all(Array.from({ length: 20 }, (_, i) => asked(trusted, '198.51.100.7', `guess-${i}`)));
    expect((await asked(trusted, '198.51.100.7', 'again')).statusCode).toBe(429);
    // Another browser behind the same proxy is not locked out by the first one's guesses.
    expect((await asked(trusted, '203.0.113.20', 'typo')).statusCode).toBe(401);
    expect((await asked(trusted, '203.0.113.20', CREDENTIALS.password)).statusCode).toBe(200);

    // Untrusted, X-Forwarded-For is the client's own claim: a fresh one per guess changes nothing.
    const untrusted = testApp(state, { clock, wait: async () => {} });
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => asked(untrusted, `192.0.2.${i}`, `guess-${i}`)),
    );
    expect(burst.filter((res) => res.statusCode === 429)).toHaveLength(12);
  });

  it('when there are no credentials, then a public name forwarded by a trusted proxy is refused (loopback only)', async () => {
    const app = buildDashboardApp({
      sources: SOURCES,
      db: state.db,
      credentials: undefined,
      host: '127.0.0.1',
      trustProxy: ['127.0.0.1'],
      clock: new ManualClock(),
      logger: silentLogger,
    });
    const res = await app.inject({ url: '/api/status', headers: FORWARDED });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'DASHBOARD_HOST_REFUSED' });
    expect((await app.inject({ url: '/api/status', headers: { host: '127.0.0.1:3000' } })).statusCode).toBe(
      200,
    );
  });
});
