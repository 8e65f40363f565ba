import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountFilters } from '../../../src/api/filters.js';
import { collect } from '../../../src/api/pagination.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, invoiceInput, testTokens } from './client-support.js';

describe('what the client logs', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('when requests succeed, fail, refresh and retry at trace level, then no token and no Authorization header is logged', async () => {
    const stale = 'stale-token-value-that-must-not-leak';
    const tokens = testTokens(stale, sandbox.accessToken);
    const { client, logs } = clientFor(sandbox, {
      tokens: tokens.provider,
      onSleep: () => sandbox.admin('PUT', '/faults', { errorRate: 0, dropAfterCommitRate: 0 }),
    });
    const account = await client.accounts.create({
      organizationId: sandbox.organizationId,
      fullName: 'Logged Customer',
      currencyCode: 'EUR',
      billingAddress: address,
    });
    await sandbox.admin('PUT', '/faults', { errorRate: 1, errorStatuses: [503] });
    await client.invoices.create(invoiceInput(account.id, 'LOG', 'log-1'));
    await sandbox.admin('PUT', '/faults', { dropAfterCommitRate: 1 });
    await client.invoices.patch(
      (await client.invoices.findBySourceIds(sandbox.organizationId, ['log-1'])).get('log-1')!.id,
      {
        paidAmount: '1.00',
      },
    );
    await collect(
      client.accounts.list({
        organizationId: sandbox.organizationId,
        filters: accountFilters().where('accountName', 'contains', 'Logged'),
      }),
    );
    await client.organizations.get('00000000-0000-4000-8000-000000000000').catch(() => undefined);

    expect(tokens.invalidated).toEqual([stale]);
    const text = logs.join('');
    const entries = logs.map((line) => JSON.parse(line));
    // The lines searched below are there: every response (debug) and the retries (info).
    const responses = entries.filter((e) => e.level === 20 && typeof e.status === 'number');
    expect(responses.map((e) => e.status)).toEqual(expect.arrayContaining([201, 503, 401, 404]));
    const retries = entries.filter((e) => e.level === 30 && typeof e.attempt === 'number');
    expect(retries.map((e) => [e.method, e.code])).toEqual([
      ['POST', 'HTTP_503'],
      ['PATCH', 'NETWORK_ERROR'],
    ]);
    expect(text).not.toContain(stale);
    expect(text).not.toContain(sandbox.accessToken);
    expect(text.toLowerCase()).not.toContain('authorization');
    expect(text.toLowerCase()).not.toContain('bearer');
  });
});
