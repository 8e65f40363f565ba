import { describe, expect, it } from 'vitest';
import { buildStartingApp } from '../../../src/dashboard/starting-app.js';
import { createLogger } from '../../../src/logging/logger.js';

/** The worker's app while it waits for the state DB and Redis: probes, and 503 everywhere else. */
describe('the starting app', () => {
  const app = buildStartingApp({
    checks: [
      { name: 'database', check: async () => undefined },
      {
        name: 'redis',
        check: async () => {
          throw new Error('cannot reach Redis at redis://10.0.0.7:6379/');
        },
      },
      { name: 'api', check: async () => 'pending' },
    ],
    logger: createLogger({ level: 'silent' }),
  });

  it('when the probes are called, then /healthz is ok and /readyz names each check, without the reasons', async () => {
    expect((await app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toEqual({
      status: 'not ready',
      checks: { database: 'ok', redis: 'failed', api: 'pending' },
    });
    expect(ready.body).not.toContain('10.0.0.7');
  });

  it('when a page is asked for, then 503 says what the worker waits for: a page that reloads itself for a browser, JSON otherwise', async () => {
    const page = await app.inject({ url: '/sources/erp', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(503);
    expect(page.headers.refresh).toBe('5');
    expect(page.headers['retry-after']).toBe('5');
    expect(page.body).toContain('it waits for Redis, the API, and retries by itself');
    expect(page.body).not.toContain('10.0.0.7');
    const api = await app.inject({ method: 'POST', url: '/actions/sources/erp/sync' });
    expect(api.statusCode).toBe(503);
    expect(api.json()).toEqual({
      code: 'DASHBOARD_STARTING',
      message: 'the worker is starting: waiting for redis, api',
      waitingFor: ['redis', 'api'],
    });
  });
});
