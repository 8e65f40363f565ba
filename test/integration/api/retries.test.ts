import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { documentFormFields } from '../../../src/api/endpoints/documents.js';
import { ApiResponseError, TimeoutError } from '../../../src/api/errors.js';
import { timerSleep } from '../../../src/api/rate-limit/sleep.js';
import type { Account } from '../../../src/api/types.js';
import { NO_FAULTS } from '../../../src/sandbox/options.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, closeAfterAborts, invoiceInput, testTokens } from './client-support.js';

describe('retries, idempotency keys and token refresh', () => {
  let sandbox: TestSandbox;
  let account: Account;
  /** Faults to apply at the first backoff sleep (the sandbox "recovers" while the client waits). */
  let onFirstSleep: Partial<typeof NO_FAULTS> | undefined;
  let harness: ReturnType<typeof clientFor>;
  const faults = (patch: Partial<typeof NO_FAULTS>) => sandbox.admin('PUT', '/faults', patch);

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 10_000, windowSeconds: 60 } });
    account = await clientFor(sandbox).client.accounts.create({
      organizationId: sandbox.organizationId,
      fullName: 'Retry Customer',
      currencyCode: 'EUR',
      billingAddress: address,
    });
  });
  beforeEach(() => {
    onFirstSleep = undefined;
    harness = clientFor(sandbox, {
      onSleep: async () => {
        if (harness.sleeps.length === 1 && onFirstSleep) await faults(onFirstSleep);
      },
    });
  });
  afterEach(() => faults(NO_FAULTS));
  afterAll(() => closeAfterAborts(sandbox));

  const invoiceWrites = () =>
    harness.sent.filter((s) => s.method === 'POST' && s.url.pathname.endsWith('/invoices'));
  const invoicesWithSource = async (sourceId: string) =>
    (
      await sandbox.call('GET', '/invoices', {
        query: { organizationId: sandbox.organizationId, filters: `sourceId:is:${sourceId}` },
      })
    ).body.nodes.length;

  it('when a write gets an injected 503, then it is retried with the same key and the same bytes', async () => {
    await faults({ errorRate: 1, errorStatuses: [503] });
    onFirstSleep = { errorRate: 0 };
    const invoice = await harness.client.invoices.create(invoiceInput(account.id, 'R503', 'r-503'), {
      idempotencyKey: 'persisted-key-503',
    });
    expect(invoice.sourceId).toBe('r-503');
    const attempts = invoiceWrites();
    expect(attempts.map((a) => a.status)).toEqual([503, 201]);
    expect(attempts.map((a) => a.headers.get('idempotency-key'))).toEqual([
      'persisted-key-503',
      'persisted-key-503',
    ]);
    expect(attempts[0]!.body!.equals(attempts[1]!.body!)).toBe(true);
    expect(harness.client.stats).toMatchObject({ requests: 2, retries: 1, rateLimited: 0 });
    expect(await invoicesWithSource('r-503')).toBe(1);
  });

  it('when the connection drops after the commit, then the retry replays the stored answer', async () => {
    await faults({ dropAfterCommitRate: 1 });
    onFirstSleep = { dropAfterCommitRate: 0 };
    const result = await harness.client.send<{ sourceId: string }>({
      method: 'POST',
      path: '/invoices',
      body: { multipart: documentFormFields(invoiceInput(account.id, 'DROP', 'r-drop')) },
    });
    expect(result).toMatchObject({ status: 201, replayed: true, data: { sourceId: 'r-drop' } });
    expect(invoiceWrites().map((a) => a.status)).toEqual(['error', 201]);
    expect(await invoicesWithSource('r-drop')).toBe(1);
  });

  it('when the answer is a 400, then it is never retried', async () => {
    const error = await harness.client.accounts
      .create({
        organizationId: sandbox.organizationId,
        fullName: '',
        currencyCode: 'EUR',
        billingAddress: address,
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({
      status: 400,
      retryable: false,
      method: 'POST',
      path: '/api/public/v1/accounts',
    });
    expect(error.apiCode).toEqual(expect.any(String));
    expect(harness.sent).toHaveLength(1);
    expect(harness.sleeps).toEqual([]);
  });

  it('when the token is refused with 401, then the provider is asked once for a new one and the call succeeds', async () => {
    const tokens = testTokens('stale-token', sandbox.accessToken);
    const refreshed = clientFor(sandbox, { tokens: tokens.provider });
    const org = await refreshed.client.organizations.get(sandbox.organizationId);
    expect(org.id).toBe(sandbox.organizationId);
    expect(tokens.invalidated).toEqual(['stale-token']);
    expect(refreshed.sent.map((s) => s.status)).toEqual([401, 200]);
    expect(refreshed.sleeps).toEqual([]);
  });

  it('when the new token is refused too, then the 401 is thrown after one refresh', async () => {
    const tokens = testTokens('stale-token', 'also-stale');
    const refused = clientFor(sandbox, { tokens: tokens.provider });
    const error = await refused.client.organizations.get(sandbox.organizationId).catch((e) => e);
    expect(error).toMatchObject({ status: 401, retryable: false });
    expect(tokens.invalidated).toEqual(['stale-token']);
    expect(refused.sent).toHaveLength(2);
  });

  it('when 429 answers with Retry-After, then the wait is never shorter and the limiter is told', async () => {
    await faults({ force429: 2, force429RetryAfter: 3 });
    const org = await harness.client.organizations.get(sandbox.organizationId);
    expect(org.id).toBe(sandbox.organizationId);
    expect(harness.sleeps).toHaveLength(2);
    for (const ms of harness.sleeps) expect(ms).toBeGreaterThanOrEqual(3_000);
    expect(harness.client.stats).toMatchObject({ requests: 3, rateLimited: 2, retries: 2 });
    expect(harness.limiter.observed.map((i) => [i.status, i.retryAfterSeconds])).toEqual([
      [429, 3],
      [429, 3],
      [200, undefined],
    ]);
  });

  it('when the idempotency store is down for a moment, then the write is retried with its key and runs once', async () => {
    await faults({ idempotencyStoreDown: true });
    onFirstSleep = { idempotencyStoreDown: false };
    const invoice = await harness.client.invoices.create(invoiceInput(account.id, 'IDEM', 'r-idem'));
    expect(invoice.sourceId).toBe('r-idem');
    const attempts = invoiceWrites();
    expect(attempts.map((a) => a.status)).toEqual([503, 201]);
    const keys = attempts.map((a) => a.headers.get('idempotency-key'));
    expect(keys[0]).toEqual(expect.any(String));
    expect(keys[1]).toBe(keys[0]);
    expect(await invoicesWithSource('r-idem')).toBe(1);
  });

  it('when every attempt fails, then the last error is thrown after maxAttempts', async () => {
    await faults({ errorRate: 1, errorStatuses: [502] });
    const limited = clientFor(sandbox, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1 } });
    const error = await limited.client.organizations.get(sandbox.organizationId).catch((e) => e);
    expect(error).toMatchObject({ status: 502, retryable: true });
    expect(limited.sent).toHaveLength(3);
  });

  it('when a write times out while it still runs, then the retry waits out the 409 and gets the stored answer', async () => {
    await faults({ latencyMs: 400 });
    // Real timers: the 409's Retry-After (1 s) must really pass for the first execution to finish.
    const slow = clientFor(sandbox, { timeoutMs: 150, sleep: timerSleep });
    const created = await slow.client.send<Account>({
      method: 'POST',
      path: '/accounts',
      body: {
        json: {
          organizationId: sandbox.organizationId,
          fullName: 'Slow Ltd',
          currencyCode: 'EUR',
          billingAddress: address,
        },
      },
    });
    expect(created).toMatchObject({ status: 201, replayed: true });
    expect(slow.sent.map((s) => s.status)).toEqual(['error', 409, 201]);
    const named = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId },
    });
    expect(named.body.nodes.filter((a: Account) => a.fullName === 'Slow Ltd')).toHaveLength(1);
  });

  it('when an answer takes longer than the timeout, then a TimeoutError is retried', async () => {
    await faults({ latencyMs: 500 });
    const slow = clientFor(sandbox, { timeoutMs: 100, retry: { maxAttempts: 1 } });
    const error = await slow.client.organizations.get(sandbox.organizationId).catch((e) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    const recovering = clientFor(sandbox, { timeoutMs: 100, onSleep: () => faults({ latencyMs: 0 }) });
    const org = await recovering.client.organizations.get(sandbox.organizationId);
    expect(org.id).toBe(sandbox.organizationId);
    expect(recovering.client.stats).toMatchObject({ requests: 2, retries: 1 });
  });
});
