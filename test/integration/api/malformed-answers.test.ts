import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiResponseError, UnexpectedResponseError } from '../../../src/api/errors.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, invoiceInput } from './client-support.js';
import { type FaultProxy, NGINX_404_PAGE, NGINX_502_PAGE, onRoute, startFaultProxy } from './fault-proxy.js';

/**
 * Answers the client cannot use, over real HTTP through a load balancer that spoils them: a 2xx
 * without what the contract gives is a fault of the service, retried with the same Idempotency-Key
 * (the service replays what it stored) and then thrown as infrastructure, never a TypeError or a
 * data failure; an error page that is not the API's says its status and a short excerpt.
 */
describe('malformed answers', () => {
  let sandbox: TestSandbox;
  let proxy: FaultProxy;
  /** The client goes through the proxy; backoff sleeps resolve at once. */
  const harness = () => clientFor({ ...sandbox, baseUrl: proxy.baseUrl } as TestSandbox);

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 10_000, windowSeconds: 60 } });
    proxy = await startFaultProxy(sandbox.baseUrl);
  });
  afterEach(() => {
    proxy.setRule(undefined);
    proxy.requests.length = 0;
  });
  afterAll(async () => {
    await proxy.close();
    await sandbox.close();
  });

  const accountInput = (sourceId: string) => ({
    organizationId: sandbox.organizationId,
    fullName: `Customer ${sourceId}`,
    currencyCode: 'EUR',
    billingAddress: address,
    source: { connectionId: 'erp-csv', sourceId },
  });
  const accountsWithSource = async (sourceId: string) =>
    (
      await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId, filters: `source:is:${sourceId}`, first: 100 },
      })
    ).body.nodes.length;
  const creates = () => proxy.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/accounts'));

  it('when every answer to a committed create is {}, then it is retried with the same key, then RESPONSE_INVALID (infrastructure), and the service holds it once', async () => {
    proxy.setRule(onRoute('POST', '/accounts', { status: 201, body: '{}', contentType: 'application/json' }));
    const { client } = harness();
    const error = await client.accounts
      .create(accountInput('M-EMPTY-OBJECT'), { idempotencyKey: 'key-empty-object' })
      .catch((e) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({
      code: 'RESPONSE_INVALID',
      kind: 'infrastructure',
      retryable: true,
      status: 201,
    });
    expect(error.message).toBe(
      'POST /api/public/v1/accounts answered 201 (application/json) without what the contract gives (no "id"): {}',
    );
    // 8 attempts, one key: the first ran the write, the next 7 got the service's stored answer.
    expect(creates().map((r) => r.idempotencyKey)).toEqual(Array(8).fill('key-empty-object'));
    expect(creates().map((r) => [r.upstreamStatus, r.replayed])).toEqual([
      [201, false],
      ...Array(7).fill([201, true]),
    ]);
    expect(await accountsWithSource('M-EMPTY-OBJECT')).toBe(1);
  });

  it('when only the first answer is spoiled, then the retry gets the stored answer and its id, and nothing is created twice', async () => {
    proxy.setRule(
      onRoute(
        'POST',
        '/accounts',
        { status: 201, body: '{}', contentType: 'application/json' },
        (_r, before) => before.every((b) => b.path !== '/api/public/v1/accounts'),
      ),
    );
    const { client } = harness();
    const account = await client.accounts.create(accountInput('M-ONCE'), { idempotencyKey: 'key-once' });
    expect(account.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(creates().map((r) => [r.answered, r.replayed])).toEqual([
      [201, false],
      [201, true],
    ]);
    expect(await accountsWithSource('M-ONCE')).toBe(1);
  });

  it('when a create answers an empty 201, then the sync port gets a clear infrastructure error, not a TypeError', async () => {
    proxy.setRule(onRoute('POST', '/invoices', { status: 201, body: '' }));
    const { client } = harness();
    const account = await client.accounts.create(accountInput('M-INVOICE-OWNER'));
    const error = await client.invoices
      .create(invoiceInput(account.id, 'EMPTY', 'm-empty-201'), { idempotencyKey: 'key-empty-201' })
      .catch((e) => e);
    expect(error).not.toBeInstanceOf(TypeError);
    expect(error).toMatchObject({ code: 'RESPONSE_INVALID', kind: 'infrastructure' });
    expect(error.message).toBe(
      'POST /api/public/v1/invoices answered 201 (no content type) with an empty body where the contract gives one',
    );
  });

  it('when a list page answers {}, then the list stops on RESPONSE_INVALID instead of reading it as the end', async () => {
    proxy.setRule(onRoute('GET', '/accounts', { status: 200, body: '{}', contentType: 'application/json' }));
    const { client } = harness();
    const listing = async () => {
      for await (const _ of client.accounts.list({ organizationId: sandbox.organizationId })) break;
    };
    await expect(listing()).rejects.toThrow(
      /answered 200 \(application\/json\) without what the contract gives \(no "nodes" list\)/,
    );
  });

  it('when a load balancer answers 502 in HTML, then it is retried, then the error says the status and a short excerpt, not the page', async () => {
    proxy.setRule(
      onRoute('POST', '/accounts', {
        status: 502,
        body: NGINX_502_PAGE,
        contentType: 'text/html',
        forward: false,
      }),
    );
    const { client } = harness();
    const error = await client.accounts.create(accountInput('M-502')).catch((e) => e);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ code: 'HTTP_502', status: 502, kind: 'infrastructure', retryable: true });
    expect(error.message).toBe(
      "POST /api/public/v1/accounts answered 502 (text/html) and a body that is not the API's JSON error: 502 Bad Gateway nginx/1.25.3",
    );
    expect(creates()).toHaveLength(8);
    expect(await accountsWithSource('M-502')).toBe(0);
  });

  it('when a load balancer answers 404 in HTML to a create, then it is no ORGANIZATION_NOT_VISIBLE; the API’s own 404 still is', async () => {
    proxy.setRule(
      onRoute('POST', '/accounts', {
        status: 404,
        body: NGINX_404_PAGE,
        contentType: 'text/html',
        forward: false,
      }),
    );
    const { client } = harness();
    const body = { ...accountInput('M-404'), source: { connectionId: 'erp-csv', sourceId: 'M-404' } };
    const error = await new ClientSyncApi(client, sandbox.organizationId)
      .createAccount(body, { idempotencyKey: 'key-404' })
      .catch((e) => e);
    expect(error).toMatchObject({ code: 'HTTP_404', kind: 'infrastructure', status: 404 });
    expect(error.message).not.toMatch(/organizationId|ORGANIZATION_NOT_VISIBLE/);
    expect(error.message).toMatch(/answered 404 \(text\/html\) .*: 404 Not Found nginx\/1\.25\.3$/);
    expect(creates()).toHaveLength(1); // a 404 is not retried

    proxy.setRule(undefined);
    const unknown = randomUUID();
    const refused = await new ClientSyncApi(client, unknown)
      .createAccount({ ...body, organizationId: unknown }, { idempotencyKey: 'key-404-api' })
      .catch((e) => e);
    expect(refused).toMatchObject({ code: 'ORGANIZATION_NOT_VISIBLE', kind: 'config' });
    expect(refused.cause).toBeInstanceOf(ApiResponseError);
  });
});
