import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../../support/sandbox.js';
import {
  newOrganization,
  seedAccount,
  seedCreditNote,
  seedInvoice,
  startClockedSandbox,
  tokenWith,
} from './balances-support.js';

/** Follows `endCursor` until an empty page, the only reliable stop condition. */
async function allPages(sandbox: TestSandbox, path: string, query: Record<string, string | number>) {
  const pages: any[] = [];
  let after: string | undefined;
  for (let i = 0; i < 10; i++) {
    const r = await sandbox.call('GET', path, { query: { ...query, after } });
    expect(r.status).toBe(200);
    pages.push(r.body);
    if (r.body.nodes.length === 0) break;
    after = r.body.pageInfo.endCursor;
  }
  return pages;
}

describe('GET /aging-balance/accounts and GET /customer-outstanding-balances', () => {
  let sandbox: TestSandbox;
  let org: string;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    ({ sandbox } = await startClockedSandbox());
    org = await newOrganization(sandbox, 'Aging rows');
    ids.alpha = await seedAccount(sandbox, org, 'Alpha');
    ids.bravo = await seedAccount(sandbox, org, 'Bravo', { currencyCode: 'USD' });
    ids.charlie = await seedAccount(sandbox, org, 'Charlie');
    ids.quiet = await seedAccount(sandbox, org, 'Quiet (nothing open)');
    await seedInvoice(sandbox, ids.alpha, '100.00', 95);
    await seedInvoice(sandbox, ids.alpha, '50.00', -3);
    await seedInvoice(sandbox, ids.bravo, '300.00', 10);
    await seedInvoice(sandbox, ids.charlie, '20.00', 40);
    await seedCreditNote(sandbox, ids.charlie, '25.00');
    await seedInvoice(sandbox, ids.quiet, '10.00', 40, { paidAmount: '10.00' });
  });
  afterAll(() => sandbox.close());

  const agingAccounts = (query: Record<string, string | number>, token?: string) =>
    sandbox.call('GET', '/aging-balance/accounts', { query: { organizationId: org, ...query }, token });

  it('when listed, then each account with open amounts has one currency-specific row, by account name', async () => {
    const r = await agingAccounts({});
    expect(r.status).toBe(200);
    expect(r.body.nodes.map((n: any) => n.accountName)).toEqual(['Alpha', 'Bravo', 'Charlie']);
    const [alpha, bravo, charlie] = r.body.nodes;
    expect(alpha).toMatchObject({ accountId: ids.alpha, currencyCode: 'EUR', total: '150.00' });
    expect(alpha.buckets).toMatchObject({ notDue: '50.00', over90: '100.00' });
    expect(bravo).toMatchObject({ currencyCode: 'USD', total: '300.00' });
    expect(charlie).toMatchObject({ total: '-5.00', unallocatedCredit: '5.00' });
    expect(charlie.buckets.days31To60).toBe('0.00');
  });

  it('when paged with first=2, then the last non-empty page still has an endCursor and the next page is empty', async () => {
    const pages = await allPages(sandbox, '/aging-balance/accounts', { organizationId: org, first: 2 });
    expect(pages.map((p) => p.nodes.length)).toEqual([2, 1, 0]);
    expect(pages[1].pageInfo.endCursor).toEqual(expect.any(String));
    expect(pages[0].pageInfo.endCursor).toMatch(/^v2:/);
  });

  it('when filtered by total and currency, then only matching rows are returned', async () => {
    const big = await agingAccounts({ filters: 'total:greaterThan:120' });
    expect(big.body.nodes.map((n: any) => n.accountName)).toEqual(['Alpha', 'Bravo']);
    const usd = await agingAccounts({ filters: 'currencyCode:is:USD' });
    expect(usd.body.nodes.map((n: any) => n.accountName)).toEqual(['Bravo']);
  });

  it('when sorted by total desc, then the largest net outstanding comes first', async () => {
    const r = await agingAccounts({ sortBy: 'total', sortOrder: 'desc' });
    expect(r.body.nodes.map((n: any) => n.accountName)).toEqual(['Bravo', 'Alpha', 'Charlie']);
  });

  it('when a filter field is not in the allow-list, then 400 LIST_FILTER_INVALID', async () => {
    const r = await agingAccounts({ filters: 'daysOverdue:greaterThan:3' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when a cursor is replayed with another sort, then 400 LIST_CURSOR_INVALID', async () => {
    const first = await agingAccounts({ first: 1, sortBy: 'total' });
    const r = await agingAccounts({ first: 1, sortBy: 'over90', after: first.body.pageInfo.endCursor });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('LIST_CURSOR_INVALID');
  });

  it('when first is above 100 or organizationId is missing, then 400', async () => {
    expect((await agingAccounts({ first: 101 })).status).toBe(400);
    const missing = await sandbox.call('GET', '/aging-balance/accounts');
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('organizationId');
  });

  it('when the token lacks an accounts scope, then 403', async () => {
    const token = await tokenWith(sandbox, ['profile']);
    expect((await agingAccounts({}, token)).status).toBe(403);
  });

  it('when customer outstanding balances are listed, then every account has a row with its outstanding amount per currency', async () => {
    const r = await sandbox.call('GET', '/customer-outstanding-balances', { query: { organizationId: org } });
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.nodes.map((n: any) => [n.accountName, n]));
    expect(Object.keys(byName)).toEqual(['Alpha', 'Bravo', 'Charlie', 'Quiet (nothing open)']);
    expect(byName.Alpha.outstandingBalances).toEqual([
      {
        currencyCode: 'EUR',
        outstandingAmount: '150.00',
        overdueAmount: '100.00',
        unallocatedCredit: '0.00',
      },
    ]);
    expect(byName.Bravo.outstandingBalances[0]).toMatchObject({
      currencyCode: 'USD',
      outstandingAmount: '300.00',
    });
    expect(byName['Quiet (nothing open)'].outstandingBalances[0].outstandingAmount).toBe('0.00');
  });

  it('when customer outstanding balances are paged and filtered, then the cursor contract holds', async () => {
    const query = { organizationId: org, first: 1, filters: 'outstandingAmount:greaterThan:0' };
    const pages = await allPages(sandbox, '/customer-outstanding-balances', query);
    expect(pages.map((p) => p.nodes.length)).toEqual([1, 1, 0]);
    expect(pages.flatMap((p) => p.nodes.map((n: any) => n.accountName))).toEqual(['Alpha', 'Bravo']);
  });

  it('when customer outstanding balances are asked without organizationId or scope, then 400 or 403', async () => {
    expect((await sandbox.call('GET', '/customer-outstanding-balances')).status).toBe(400);
    const token = await tokenWith(sandbox, ['communications:read']);
    const denied = await sandbox.call('GET', '/customer-outstanding-balances', {
      query: { organizationId: org },
      token,
    });
    expect(denied.status).toBe(403);
  });
});
