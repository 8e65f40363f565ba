import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect } from '../../../src/api/pagination.js';
import { timerSleep } from '../../../src/api/rate-limit/sleep.js';
import { seededRandom as seeded } from '../../support/kill-rounds.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, invoiceInput } from './client-support.js';

const N = 200;

describe('acceptance: creates under injected faults', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({
      rateLimit: { quota: 100_000, windowSeconds: 60 },
      random: seeded(20260115),
    });
  });
  afterAll(() => sandbox.close());

  it('when 10% of requests get a 5xx and 5% of commits lose their connection, then N creates give exactly N invoices and no 422', async () => {
    // Real backoff timers here (10..200 ms): the whole path runs as in production.
    const { client, sent } = clientFor(sandbox, { concurrency: 8, sleep: timerSleep });
    const account = await client.accounts.create({
      organizationId: sandbox.organizationId,
      fullName: 'Acceptance Customer',
      currencyCode: 'EUR',
      billingAddress: address,
    });
    await sandbox.admin('PUT', '/faults', {
      errorRate: 0.1,
      errorStatuses: [500, 502, 503],
      dropAfterCommitRate: 0.05,
    });

    const sourceIds = Array.from({ length: N }, (_, i) => `acc-${String(i).padStart(4, '0')}`);
    const created = await Promise.all(
      sourceIds.map((sourceId, i) => client.invoices.create(invoiceInput(account.id, i, sourceId))),
    );

    await sandbox.admin('PUT', '/faults', { errorRate: 0, dropAfterCommitRate: 0 });
    expect(created.map((invoice) => invoice.sourceId)).toEqual(sourceIds);
    expect((await sandbox.admin('GET', '/stats')).invoices).toBe(N);
    const listed = await collect(client.invoices.list({ organizationId: sandbox.organizationId }));
    expect(new Set(listed.map((invoice) => invoice.sourceId)).size).toBe(N);

    const statuses = sent
      .filter((s) => s.url.pathname.endsWith('/invoices') && s.method === 'POST')
      .map((s) => s.status);
    expect(statuses).not.toContain(422);
    // The faults did happen: the test is only meaningful if retries were needed.
    expect(statuses.filter((s) => s === 'error').length).toBeGreaterThan(0);
    expect(statuses.filter((s) => typeof s === 'number' && s >= 500).length).toBeGreaterThan(0);
    expect(client.stats.retries).toBe(statuses.length - N);
  });
});
