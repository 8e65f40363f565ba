import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { PREDEFINED_TAGS } from '../../../src/sandbox/store.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { accountBody, createAccount, createDocument, documentForm } from './accounts-documents-support.js';

const VIP = PREDEFINED_TAGS[0]!;

/**
 * A dedicated organization, at 2026-03-02:
 * Alpha: 100 overdue since 02-14 + 50 not due, VIP, source erp/A-1 -> Open
 * Beta: 200 fully paid -> Settled; Gamma: no invoice -> NoInvoice
 * Delta (seeded): 2 x 30 overdue since 01-01, dunning paused, Sepa, proceeding, schedule -> Open
 * Epsilon (seeded): written off, 10 remaining, not due -> WrittenOff
 */
describe('GET /accounts', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  let org: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    org = (await sandbox.admin('POST', '/organizations', { memberUserIds: [sandbox.seeded.user.id] })).id;
    const inOrg = { organizationId: org };
    const alpha = await createAccount(sandbox, 'Alpha', {
      ...inOrg,
      source: { connectionId: 'erp', sourceId: 'A-1' },
    });
    await sandbox.call('POST', `/accounts/${alpha.id}/tags`, { body: { tagIds: [VIP.id] } });
    await createDocument(
      sandbox,
      '/invoices',
      documentForm(alpha.id, { totalAmount: '100.00', taxAmount: '0' }),
    );
    const notDue = { totalAmount: '50.00', taxAmount: '0', 'dueDate.month': '4', 'dueDate.day': '1' };
    await createDocument(sandbox, '/invoices', documentForm(alpha.id, notDue));
    const beta = await createAccount(sandbox, 'beta', inOrg);
    const paid = await createDocument(sandbox, '/invoices', documentForm(beta.id, { totalAmount: '200.00' }));
    await sandbox.call('PATCH', `/invoices/${paid.id}`, { body: { paidAmount: '200.00' } });
    await createAccount(sandbox, 'Gamma', inOrg);
    const delta = await sandbox.admin('POST', '/accounts', {
      ...inOrg,
      fullName: 'Délta',
      dunningPaused: true,
      paymentMethod: 'Sepa',
      collectiveProceeding: 'Yes',
      hasPaymentSchedule: true,
    });
    for (const number of ['D-1', 'D-2']) {
      const due = { year: 2026, month: 1, day: 1 };
      await sandbox.admin('POST', '/documents', {
        accountId: delta.id,
        number,
        totalAmount: '30.00',
        dueDate: due,
      });
    }
    const epsilon = await sandbox.admin('POST', '/accounts', {
      ...inOrg,
      fullName: 'Epsilon',
      writtenOff: true,
    });
    const later = { year: 2026, month: 6, day: 30 };
    await sandbox.admin('POST', '/documents', {
      accountId: epsilon.id,
      totalAmount: '10.00',
      dueDate: later,
    });
  });
  afterAll(() => sandbox.close());

  const list = (query: Record<string, string | number | undefined>) =>
    sandbox.call('GET', '/accounts', { query: { organizationId: org, ...query } });
  const names = async (query: Record<string, string | number | undefined>) => {
    const res = await list(query);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.nodes.map((a: any) => a.fullName);
  };

  it('when organizationId is missing or not a uuid, then 400; when unknown, then 404', async () => {
    expect((await sandbox.call('GET', '/accounts')).status).toBe(400);
    expect((await sandbox.call('GET', '/accounts', { query: { organizationId: 'x' } })).status).toBe(400);
    expect((await sandbox.call('GET', '/accounts', { query: { organizationId: randomUUID() } })).status).toBe(
      404,
    );
  });

  it('when the call is plain (no first, filters or sort), then every account comes in one page, by name', async () => {
    for (let i = 0; i < 22; i++) await createAccount(sandbox, `Bulk ${String(i).padStart(2, '0')}`);
    const res = await sandbox.call('GET', '/accounts', { query: { organizationId: sandbox.organizationId } });
    expect(res.body.nodes).toHaveLength(22);
    expect(res.body.nodes[0].fullName).toBe('Bulk 00');
    const next = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, after: res.body.pageInfo.endCursor },
    });
    expect(next.body.nodes).toEqual([]);
    const filtered = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, filters: 'accountName:startsWith:bulk' },
    });
    expect(filtered.body.nodes).toHaveLength(20);
    expect(filtered.body.pageInfo.endCursor).toMatch(/^v2:/);
  });

  it('when paging with first, then pages follow by name (case and accents ignored) until an empty page', async () => {
    const seen: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await list({ first: 2, after });
      if (page.body.nodes.length === 0) break;
      seen.push(...page.body.nodes.map((a: any) => a.fullName));
      after = page.body.pageInfo.endCursor;
    }
    expect(seen).toEqual(['Alpha', 'beta', 'Délta', 'Epsilon', 'Gamma']);
  });

  it('when items are listed, then they carry readOnlyReason, source and lastUnlinkedSource but not collectionStatus', async () => {
    const [alpha] = (await list({ filters: 'accountName:equals:alpha' })).body.nodes;
    expect(alpha).toMatchObject({
      readOnlyReason: null,
      lastUnlinkedSource: null,
      source: { sourceId: 'A-1' },
    });
    expect(alpha).not.toHaveProperty('collectionStatus');
    expect(alpha).toMatchObject({
      remainingBalance: '150.00',
      overdueBalance: '100.00',
      overdueInvoiceCount: 1,
      daysOverdue: 16,
    });
  });

  it('when filtering by accountName, then contains, startsWith and equals ignore case and accents', async () => {
    expect(await names({ filters: 'accountName:contains:TA' })).toEqual(['beta', 'Délta']);
    expect(await names({ filters: 'accountName:startsWith:del' })).toEqual(['Délta']);
    expect(await names({ filters: 'accountName:equals:delta' })).toEqual(['Délta']);
  });

  it.each([
    'accountName:is:Alpha',
    'dunningPaused:is:true',
    'source:contains:A',
    'collectionStatus:is:Closed',
    'balance:equals:1',
    'remainingBalance:greaterThan:abc',
  ])('when the filter is %s, then 400 LIST_FILTER_INVALID', async (filters) => {
    const res = await list({ filters });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when filtering by tags, then ids and names both match', async () => {
    expect(await names({ filters: `tags:containsAny:${VIP.id}` })).toEqual(['Alpha']);
    expect(await names({ filters: 'tags:containsAll:vip' })).toEqual(['Alpha']);
    expect(await names({ filters: `tags:containsNone:${VIP.id}` })).toEqual([
      'beta',
      'Délta',
      'Epsilon',
      'Gamma',
    ]);
    expect(await names({ filters: 'tags:isNotEmpty' })).toEqual(['Alpha']);
    expect(await names({ filters: 'tags:isEmpty' })).toHaveLength(4);
  });

  it('when filtering by collectionStatus, then it is derived from the invoices', async () => {
    expect(await names({ filters: 'collectionStatus:is:Open' })).toEqual(['Alpha', 'Délta']);
    expect(await names({ filters: 'collectionStatus:is:Settled' })).toEqual(['beta']);
    expect(await names({ filters: 'collectionStatus:is:NoInvoice' })).toEqual(['Gamma']);
    expect(await names({ filters: 'collectionStatus:is:WrittenOff' })).toEqual(['Epsilon']);
    expect(await names({ filters: 'collectionStatus:isAnyOf:Settled,NoInvoice' })).toEqual(['beta', 'Gamma']);
    expect(await names({ filters: 'collectionStatus:isNot:Open' })).toEqual(['beta', 'Epsilon', 'Gamma']);
  });

  it('when filtering by balances and overdue counts, then numbers compare exactly', async () => {
    expect(await names({ filters: 'daysOverdue:greaterThan:20' })).toEqual(['Délta']);
    expect(await names({ filters: 'overdueInvoiceCount:equals:2' })).toEqual(['Délta']);
    expect(await names({ filters: 'overdueBalance:between:50,100' })).toEqual(['Alpha', 'Délta']);
    expect(await names({ filters: 'remainingBalance:equals:0' })).toEqual(['beta', 'Gamma']);
    expect(await names({ filters: 'remainingBalance:lessThan:15' })).toEqual(['beta', 'Epsilon', 'Gamma']);
  });

  it('when filtering by dunningPaused, hasPaymentSchedule, paymentMethod, collectiveProceeding, then the seeded account matches', async () => {
    expect(await names({ filters: 'dunningPaused:isTrue' })).toEqual(['Délta']);
    expect(await names({ filters: 'dunningPaused:isFalse' })).toHaveLength(4);
    expect(await names({ filters: 'hasPaymentSchedule:isTrue' })).toEqual(['Délta']);
    expect(await names({ filters: 'paymentMethod:is:sepa' })).toEqual(['Délta']);
    expect(await names({ filters: 'paymentMethod:isEmpty' })).toHaveLength(4);
    expect(await names({ filters: 'collectiveProceeding:is:Yes' })).toEqual(['Délta']);
    expect(await names({ filters: 'collectiveProceeding:isAnyOf:Yes,Unknown' })).toEqual([
      'Alpha',
      'beta',
      'Délta',
      'Gamma',
    ]);
  });

  it('when filtering by source, then the sourceId is compared exactly (case-sensitive)', async () => {
    expect(await names({ filters: 'source:is:A-1' })).toEqual(['Alpha']);
    expect(await names({ filters: 'source:is:a-1' })).toEqual([]);
    expect(await names({ filters: 'source:isAnyOf:A-1,Z-9' })).toEqual(['Alpha']);
    expect(await names({ filters: 'source:isNotEmpty' })).toEqual(['Alpha']);
    expect(await names({ filters: 'source:isEmpty' })).toHaveLength(4);
  });

  it('when sorting by a balance, then the order follows it, ties by name, and desc reverses', async () => {
    expect(await names({ sortBy: 'overdueBalance', sortOrder: 'desc' })).toEqual([
      'Alpha',
      'Délta',
      'beta',
      'Epsilon',
      'Gamma',
    ]);
    expect(await names({ sortBy: 'overdueInvoiceCount', sortOrder: 'desc', first: 1 })).toEqual(['Délta']);
    expect(await names({ sortBy: 'remainingBalance' })).toEqual([
      'beta',
      'Gamma',
      'Epsilon',
      'Délta',
      'Alpha',
    ]);
    expect(await names({ sortBy: 'fullName', sortOrder: 'desc' })).toEqual([
      'Gamma',
      'Epsilon',
      'Délta',
      'beta',
      'Alpha',
    ]);
  });

  it('when sortBy is unknown, then 400', async () => {
    expect((await list({ sortBy: 'createdAt' })).status).toBe(400);
  });

  it('when a filtered cursor is replayed with other filters, then 400 LIST_CURSOR_INVALID', async () => {
    const page = await list({ filters: 'collectionStatus:is:Open', first: 1 });
    const replay = await list({
      filters: 'collectionStatus:is:Settled',
      first: 1,
      after: page.body.pageInfo.endCursor,
    });
    expect(replay.status).toBe(400);
    expect(replay.body.code).toBe('LIST_CURSOR_INVALID');
    const same = await list({
      filters: 'collectionStatus:is:Open',
      first: 1,
      after: page.body.pageInfo.endCursor,
    });
    expect(same.body.nodes.map((a: any) => a.fullName)).toEqual(['Délta']);
  });

  it('when first is above 100, then 400', async () => {
    expect((await list({ first: 101 })).status).toBe(400);
  });

  it('when a body account is created in the other organization, then it is listed there only', async () => {
    await sandbox.call('POST', '/accounts', {
      body: { ...accountBody(sandbox, 'Zeta'), organizationId: org },
    });
    expect(await names({ filters: 'accountName:equals:Zeta' })).toEqual(['Zeta']);
    const seeded = await sandbox.call('GET', '/accounts', {
      query: { organizationId: sandbox.organizationId, filters: 'accountName:equals:Zeta' },
    });
    expect(seeded.body.nodes).toEqual([]);
  });
});
