import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_FAULTS } from '../../../src/sandbox/options.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

describe('fault injection (sandbox controls, not part of the spec)', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterEach(() => sandbox.admin('PUT', '/faults', NO_FAULTS));
  afterAll(() => sandbox.close());

  it('when the error rate is 1, then every API request gets an injected status and nothing runs', async () => {
    await sandbox.admin('PUT', '/faults', { errorRate: 1, errorStatuses: [502] });
    const r = await sandbox.call('POST', '/accounts', {
      body: { organizationId: sandbox.organizationId, fullName: 'Never', currencyCode: 'EUR' },
    });
    expect(r.status).toBe(502);
    expect(r.body.code).toBe('HTTP_502');
    await sandbox.admin('PUT', '/faults', { errorRate: 0 });
    const list = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId },
    });
    expect(list.body.nodes.map((a: any) => a.fullName)).not.toContain('Never');
  });

  it('when a 429 is forced, then the next request gets it with the configured Retry-After', async () => {
    await sandbox.admin('PUT', '/faults', { force429: 1, force429RetryAfter: 7 });
    const r = await sandbox.call('GET', '/organizations');
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect((await sandbox.call('GET', '/organizations')).status).toBe(200);
  });

  it('when latency is set, then requests take at least that long', async () => {
    await sandbox.admin('PUT', '/faults', { latencyMs: 150 });
    const started = performance.now();
    await sandbox.call('GET', '/organizations');
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('when the admin token is missing, then the controls refuse with 401', async () => {
    const r = await fetch(`${sandbox.baseUrl}/__sandbox/faults`);
    expect(r.status).toBe(401);
  });
});
