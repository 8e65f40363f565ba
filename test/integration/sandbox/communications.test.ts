import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../../support/sandbox.js';
import { newOrganization, seedAccount, startClockedSandbox, tokenWith } from './balances-support.js';

describe('GET /communications', () => {
  let sandbox: TestSandbox;
  let org: string;
  const acc: Record<string, string> = {};
  const com: Record<string, string> = {};
  const seed = async (name: string, accountId: string, fields: Record<string, unknown>) => {
    com[name] = (await sandbox.admin('POST', '/communications', { accountId, ...fields })).id;
  };
  beforeAll(async () => {
    ({ sandbox } = await startClockedSandbox());
    org = await newOrganization(sandbox, 'Communications Org');
    acc.acme = await seedAccount(sandbox, org, 'Acme');
    acc.beta = await seedAccount(sandbox, org, 'Beta');
    acc.gone = await seedAccount(sandbox, org, 'Gone Ltd');
    const jane = { contactId: '7d7c1f9e-1111-4c1a-9a1b-000000000001', contactName: 'Jane Doe' };
    await seedCommunications(jane);
    const deleted = await sandbox.call('DELETE', `/accounts/${acc.gone}`);
    expect(deleted.status).toBe(204);
  });
  afterAll(() => sandbox.close());

  async function seedCommunications(jane: Record<string, string>) {
    await seed('reminder', acc.acme!, {
      ...jane,
      direction: 'Outgoing',
      status: 'Sent',
      deliveryStatus: 'Delivered',
      subject: 'Reminder 1',
      communicationAt: '2026-02-01T09:00:00.000Z',
    });
    await seed('reply', acc.acme!, {
      ...jane,
      direction: 'Incoming',
      status: 'Received',
      deliveryStatus: null,
      subject: 'Re: Reminder 1',
      communicationAt: '2026-02-02T10:00:00.000Z',
    });
    await seed('bounced', acc.beta!, {
      contactName: 'Émile Zola',
      direction: 'Outgoing',
      status: 'Failed',
      deliveryStatus: 'Bounced',
      subject: 'Reminder',
      communicationAt: '2026-02-05T08:00:00.000Z',
    });
    await seed('letter', acc.beta!, {
      channel: 'Letter',
      direction: 'Outgoing',
      status: 'Sent',
      deliveryStatus: 'Pending',
      subject: 'Formal notice',
      communicationAt: '2026-02-10T08:00:00.000Z',
    });
    await seed('orphan', acc.gone!, {
      direction: 'Incoming',
      status: 'Received',
      deliveryStatus: null,
      subject: 'Please close my account',
      communicationAt: '2026-02-20T08:00:00.000Z',
    });
  }

  const list = (query: Record<string, string | number> = {}, token?: string) =>
    sandbox.call('GET', '/communications', { query: { organizationId: org, ...query }, token });
  const names = (body: any) =>
    body.nodes.map((n: any) => Object.entries(com).find(([, id]) => id === n.id)?.[0]);

  it('when listed, then incoming and outgoing communications come in one list joined to account and contact, oldest first', async () => {
    const r = await list();
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['reminder', 'reply', 'bounced', 'letter', 'orphan']);
    expect(new Set(r.body.nodes.map((n: any) => n.direction))).toEqual(new Set(['Incoming', 'Outgoing']));
    expect(r.body.nodes[0]).toMatchObject({
      accountId: acc.acme,
      accountName: 'Acme',
      accountDeletedAt: null,
      contactName: 'Jane Doe',
      subject: 'Reminder 1',
    });
    expect(r.body.pageInfo.endCursor).toMatch(/^v2:/);
  });

  it('when the account was deleted, then its communications survive with accountDeletedAt set and the account answers 404', async () => {
    const r = await list();
    const orphan = r.body.nodes.find((n: any) => n.id === com.orphan);
    expect(orphan).toMatchObject({ accountId: acc.gone, accountName: 'Gone Ltd' });
    expect(Number.isNaN(Date.parse(orphan.accountDeletedAt))).toBe(false);
    expect(orphan).not.toHaveProperty('accountDeleted');
    expect((await sandbox.call('GET', `/accounts/${acc.gone}`)).status).toBe(404);
  });

  it('when filtered by direction, then only that direction is returned; an unknown direction is LIST_FILTER_INVALID', async () => {
    expect(names((await list({ filters: 'direction:is:Incoming' })).body)).toEqual(['reply', 'orphan']);
    expect(names((await list({ filters: 'direction:isNot:Incoming' })).body)).toEqual([
      'reminder',
      'bounced',
      'letter',
    ]);
    const bad = await list({ filters: 'direction:is:Sideways' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when sorted by communicationAt desc, then the newest communication comes first', async () => {
    const r = await list({ sortBy: 'communicationAt', sortOrder: 'desc' });
    expect(names(r.body)).toEqual(['orphan', 'letter', 'bounced', 'reply', 'reminder']);
  });

  it('when sorted by contactFullName, then names compare ignoring accents and missing contacts come last', async () => {
    const r = await list({ sortBy: 'contactFullName' });
    expect(names(r.body)).toEqual(['bounced', 'reminder', 'reply', 'letter', 'orphan']);
  });

  it('when filtered by status, delivery status, account name, contact, subject or date, then the conditions apply', async () => {
    const by = async (filters: string) => names((await list({ filters })).body);
    expect(await by('status:isAnyOf:Failed,Received')).toEqual(['reply', 'bounced', 'orphan']);
    expect(await by('deliveryStatus:isEmpty')).toEqual(['reply', 'orphan']);
    expect(await by('accountName:contains:acm')).toEqual(['reminder', 'reply']);
    expect(await by('contactName:startsWith:emile')).toEqual(['bounced']);
    expect(await by('subject:startsWith:re%3A')).toEqual(['reply']);
    expect(await by('date:between:2026-02-02,2026-02-10')).toEqual(['reply', 'bounced', 'letter']);
    expect(await by('date:on:2026-02-20;direction:is:Incoming')).toEqual(['orphan']);
  });

  it('when a filter field or sort key is not in the allow-list, then 400', async () => {
    const field = await list({ filters: 'channel:is:Email' });
    expect(field.status).toBe(400);
    expect(field.body.code).toBe('LIST_FILTER_INVALID');
    expect((await list({ sortBy: 'subject' })).status).toBe(400);
  });

  it('when accountId is given, then only that account’s communications are listed', async () => {
    expect(names((await list({ accountId: acc.beta! })).body)).toEqual(['bounced', 'letter']);
    expect((await list({ accountId: 'nope' })).status).toBe(400);
  });

  it('when paged with first=2, then pages follow until an empty page and the last non-empty one has an endCursor', async () => {
    const sizes: number[] = [];
    let after: string | undefined;
    for (let i = 0; i < 5; i++) {
      const r = await list({ first: 2, ...(after ? { after } : {}) });
      sizes.push(r.body.nodes.length);
      if (r.body.nodes.length === 0) break;
      expect(r.body.pageInfo.endCursor).toEqual(expect.any(String));
      after = r.body.pageInfo.endCursor;
    }
    expect(sizes).toEqual([2, 2, 1, 0]);
  });

  it('when organizationId is missing, then 400', async () => {
    const r = await sandbox.call('GET', '/communications');
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('organizationId');
  });

  it('when the token has communications:read or dunning:manage, then 200; with accounts:all only, then 403', async () => {
    for (const scope of ['communications:read', 'dunning:manage']) {
      expect((await list({}, await tokenWith(sandbox, [scope]))).status).toBe(200);
    }
    const denied = await list({}, await tokenWith(sandbox, ['accounts:all']));
    expect(denied.status).toBe(403);
  });
});
