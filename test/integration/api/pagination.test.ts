import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReceivablesClient } from '../../../src/api/client.js';
import { ApiResponseError, FilterError, PaginationError } from '../../../src/api/errors.js';
import { accountFilters, type FilterBuilder, invoiceFilters } from '../../../src/api/filters.js';
import { collect } from '../../../src/api/pagination.js';
import type { Account } from '../../../src/api/types.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  address,
  clientFor,
  invoiceInput,
  memoryLogger,
  recordingLimiter,
  testTokens,
} from './client-support.js';

/** The builder without its compile-time checks, to show the run-time ones. */
type LooseBuilder = FilterBuilder<'accounts'> & {
  where(field: string, operator: string, value: string): FilterBuilder<'accounts'>;
};

describe('pagination and filters through the typed client', () => {
  let sandbox: TestSandbox;
  let account: Account;
  const names = ['Page Alpha', 'Page Bravo', 'Page Charlie', 'Page Delta', 'Page Echo'];
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 10_000, windowSeconds: 60 } });
    const { client } = clientFor(sandbox);
    for (const fullName of names) {
      account = await client.accounts.create({
        organizationId: sandbox.organizationId,
        fullName,
        currencyCode: 'EUR',
        billingAddress: address,
      });
    }
  });
  afterAll(() => sandbox.close());

  it('when the last non-empty page carries a cursor, then iteration follows it and stops on the empty page', async () => {
    const { client, sent } = clientFor(sandbox);
    const filters = accountFilters().where('accountName', 'startsWith', 'Page ');
    const params = { organizationId: sandbox.organizationId, filters, first: 2 };
    const third = await client.accounts.listPage({
      ...params,
      after: (
        await client.accounts.listPage({
          ...params,
          after: (await client.accounts.listPage(params)).pageInfo.endCursor!,
        })
      ).pageInfo.endCursor!,
    });
    expect(third.nodes).toHaveLength(1);
    expect(third.pageInfo.endCursor).toEqual(expect.any(String));

    sent.length = 0;
    const all = await collect(client.accounts.list(params));
    expect(all.map((a) => a.fullName)).toEqual(names);
    expect(sent.map((s) => s.url.searchParams.get('after'))).toEqual([
      null,
      expect.stringMatching(/^v2:/),
      expect.stringMatching(/^v2:/),
      expect.stringMatching(/^v2:/),
    ]);
  });

  it('when a plain list is read, then the historical single page is followed by an empty one', async () => {
    const { client, sent } = clientFor(sandbox);
    const first = await client.accounts.listPage({ organizationId: sandbox.organizationId });
    expect(first.nodes.length).toBeGreaterThanOrEqual(names.length);
    const all = await collect(client.accounts.list({ organizationId: sandbox.organizationId, first: 100 }));
    expect(all).toHaveLength(first.nodes.length);
    expect(sent).toHaveLength(3);
  });

  it('when a cursor is replayed with other filters, then LIST_CURSOR_INVALID is thrown and not retried', async () => {
    const { client, sent } = clientFor(sandbox);
    const page = await client.accounts.listPage({
      organizationId: sandbox.organizationId,
      filters: accountFilters().where('accountName', 'startsWith', 'Page'),
      first: 1,
    });
    const error = await client.accounts
      .listPage({
        organizationId: sandbox.organizationId,
        filters: accountFilters().where('accountName', 'contains', 'a'),
        after: page.pageInfo.endCursor!,
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({ status: 400, apiCode: 'LIST_CURSOR_INVALID' });
    expect(sent).toHaveLength(2);
  });

  it('when the server repeats a cursor, then the typed list refuses to loop', async () => {
    let calls = 0;
    const looping: typeof fetch = async () => {
      calls++;
      return Response.json({ nodes: [{ id: `a${calls}` }], pageInfo: { endCursor: 'same-cursor' } });
    };
    const client = new ReceivablesClient({
      baseUrl: sandbox.baseUrl,
      tokens: testTokens('unused').provider,
      limiter: recordingLimiter().limiter,
      logger: memoryLogger().logger,
      fetch: looping,
    });
    await expect(collect(client.accounts.list({ organizationId: sandbox.organizationId }))).rejects.toThrow(
      PaginationError,
    );
    expect(calls).toBe(2);
  });

  it('when a filter breaks a limit, then FilterError is thrown before any request', async () => {
    const { client, sent } = clientFor(sandbox);
    const tooMany = Array.from({ length: 51 }, (_, i) => `id-${i}`);
    expect(() => invoiceFilters().where('sourceId', 'isAnyOf', tooMany)).toThrow(FilterError);
    await expect(client.invoices.findBySourceIds(sandbox.organizationId, ['x'.repeat(201)])).rejects.toThrow(
      /limit is 200 characters/,
    );
    const listUnknownField = () =>
      client.accounts.list({
        organizationId: sandbox.organizationId,
        filters: (accountFilters() as unknown as LooseBuilder).where('unknownField', 'is', 'x'),
      });
    expect(listUnknownField).toThrow(FilterError);
    expect(sent).toHaveLength(0);
  });

  it('when more than 50 sourceIds are looked up, then they are batched within the limits and all found', async () => {
    const { client, sent } = clientFor(sandbox);
    const sourceIds = Array.from({ length: 60 }, (_, i) => `batch;${i},x:y`);
    for (const [i, sourceId] of sourceIds.slice(0, 55).entries()) {
      await client.invoices.create(invoiceInput(account.id, `B${i}`, sourceId));
    }
    sent.length = 0;
    const found = await client.invoices.findBySourceIds(sandbox.organizationId, sourceIds);
    expect([...found.keys()].sort()).toEqual(sourceIds.slice(0, 55).sort());
    const filters = sent.map((s) => s.url.searchParams.get('filters')!);
    expect(filters).toHaveLength(4); // two batches (50 + 10), each ending on an empty page
    for (const text of filters) expect(text.split(':')[2]!.split(',').length).toBeLessThanOrEqual(50);
  });
});
