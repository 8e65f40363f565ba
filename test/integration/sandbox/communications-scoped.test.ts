import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSandbox } from '../../support/sandbox.js';
import { newOrganization, seedAccount, startClockedSandbox, tokenWith } from './balances-support.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('account- and channel-scoped communication lists', () => {
  let sandbox: TestSandbox;
  let org: string;
  let live: string;
  let gone: string;
  const com: Record<string, string> = {};
  const seed = async (name: string, accountId: string, fields: Record<string, unknown>) => {
    com[name] = (await sandbox.admin('POST', '/communications', { accountId, ...fields })).id;
  };
  beforeAll(async () => {
    ({ sandbox } = await startClockedSandbox());
    org = await newOrganization(sandbox, 'Scoped lists');
    live = await seedAccount(sandbox, org, 'Live Co');
    gone = await seedAccount(sandbox, org, 'Gone Co');
    await seed('liveIn', live, { direction: 'Incoming', communicationAt: '2026-02-01T08:00:00.000Z' });
    await seed('liveOut', live, { direction: 'Outgoing', communicationAt: '2026-02-02T08:00:00.000Z' });
    await seed('liveLetter', live, {
      direction: 'Outgoing',
      channel: 'Letter',
      communicationAt: '2026-02-03T08:00:00.000Z',
    });
    await seed('goneIn', gone, { direction: 'Incoming', communicationAt: '2026-02-04T08:00:00.000Z' });
    await seed('goneOut', gone, { direction: 'Outgoing', communicationAt: '2026-02-05T08:00:00.000Z' });
    expect((await sandbox.call('DELETE', `/accounts/${gone}`)).status).toBe(204);
  });
  afterAll(() => sandbox.close());

  const get = (path: string, query: Record<string, string | number> = {}, token?: string) =>
    sandbox.call('GET', path, { query, token });
  const names = (body: any) =>
    body.nodes.map((n: any) => Object.entries(com).find(([, id]) => id === n.id)?.[0]);

  const orgLists: [string, string[]][] = [
    ['/emails', ['liveIn', 'liveOut', 'goneIn', 'goneOut']],
    ['/incoming-emails', ['liveIn', 'goneIn']],
    ['/outgoing-emails', ['liveOut', 'goneOut']],
    ['/incoming-email-communications', ['liveIn', 'goneIn']],
    ['/outgoing-email-communications', ['liveOut', 'goneOut']],
  ];

  for (const [path, expected] of orgLists) {
    it(`when ${path} is listed, then it holds the organization's matching e-mails with the boolean accountDeleted`, async () => {
      const r = await get(path, { organizationId: org });
      expect(r.status).toBe(200);
      expect(names(r.body)).toEqual(expected);
      for (const node of r.body.nodes) {
        expect(node).not.toHaveProperty('accountDeletedAt');
        expect(node.accountDeleted).toBe(node.accountId === gone);
      }
    });

    it(`when ${path} is called without organizationId, then 400`, async () => {
      const r = await get(path);
      expect(r.status).toBe(400);
      expect(r.body.message).toContain('organizationId');
    });
  }

  it('when an account-scoped list is read, then it holds that account’s e-mails of one direction with accountDeleted false', async () => {
    const incoming = await get(`/accounts/${live}/incoming-email-communications`);
    expect(incoming.status).toBe(200);
    expect(names(incoming.body)).toEqual(['liveIn']);
    expect(incoming.body.nodes[0]).toMatchObject({
      accountId: live,
      accountName: 'Live Co',
      accountDeleted: false,
    });
    expect(names((await get(`/accounts/${live}/outgoing-email-communications`)).body)).toEqual(['liveOut']);
  });

  it('when the account was deleted, then its account-scoped lists still answer with accountDeleted true', async () => {
    expect((await sandbox.call('GET', `/accounts/${gone}`)).status).toBe(404);
    const r = await get(`/accounts/${gone}/outgoing-email-communications`);
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['goneOut']);
    expect(r.body.nodes[0]).toMatchObject({ accountName: 'Gone Co', accountDeleted: true });
  });

  it('when the account never existed, then the account-scoped list answers 404', async () => {
    expect((await get(`/accounts/${UNKNOWN}/incoming-email-communications`)).status).toBe(404);
  });

  it('when a scoped list is sorted desc and paged, then the cursor contract holds', async () => {
    const query = { organizationId: org, sortBy: 'communicationAt', sortOrder: 'desc', first: 3 };
    const first = await get('/emails', query);
    expect(names(first.body)).toEqual(['goneOut', 'goneIn', 'liveOut']);
    const second = await get('/emails', { ...query, after: first.body.pageInfo.endCursor });
    expect(names(second.body)).toEqual(['liveIn']);
    expect(second.body.pageInfo.endCursor).toEqual(expect.any(String));
    const third = await get('/emails', { ...query, after: second.body.pageInfo.endCursor });
    expect(third.body.nodes).toEqual([]);
  });

  it('when a cursor of one communication list is replayed on another, then 400 LIST_CURSOR_INVALID', async () => {
    const page = await get('/emails', { organizationId: org, first: 1 });
    const r = await get('/incoming-emails', {
      organizationId: org,
      first: 1,
      after: page.body.pageInfo.endCursor,
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('LIST_CURSOR_INVALID');
  });

  it('when the token lacks communications:read and dunning:manage, then every scoped list answers 403', async () => {
    const token = await tokenWith(sandbox, ['accounts:read']);
    expect((await get('/emails', { organizationId: org }, token)).status).toBe(403);
    expect((await get(`/accounts/${live}/incoming-email-communications`, {}, token)).status).toBe(403);
    const manager = await tokenWith(sandbox, ['dunning:manage']);
    expect((await get(`/accounts/${live}/incoming-email-communications`, {}, manager)).status).toBe(200);
  });
});
