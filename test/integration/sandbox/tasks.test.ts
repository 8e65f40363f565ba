import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREDEFINED_TAGS } from '../../../src/sandbox/store.js';
import type { TestSandbox } from '../../support/sandbox.js';
import { newOrganization, seedAccount, startClockedSandbox, tokenWith } from './balances-support.js';

const [VIP, DISPUTED] = PREDEFINED_TAGS.map((t) => t.id) as [string, string];

describe('GET /account-tasks/search', () => {
  let sandbox: TestSandbox;
  let org: string;
  const task: Record<string, string> = {};
  const seed = async (name: string, accountId: string, fields: Record<string, unknown>) => {
    task[name] = (await sandbox.admin('POST', '/tasks', { accountId, ...fields })).id;
  };
  beforeAll(async () => {
    ({ sandbox } = await startClockedSandbox());
    org = await newOrganization(sandbox, 'Tasks Org');
    const acme = await seedAccount(sandbox, org, 'Acme');
    const beta = await seedAccount(sandbox, org, 'Beta');
    const elsewhere = await seedAccount(sandbox, await newOrganization(sandbox, 'Other'), 'Elsewhere');
    await seed('callJane', acme, {
      title: 'Call Jane',
      status: 'Todo',
      type: 'Call',
      tagIds: [VIP],
      balance: '150.00',
      createdAt: '2026-02-01T10:00:00.000Z',
      updatedAt: '2026-02-10T10:00:00.000Z',
    });
    await seed('letter', acme, {
      title: 'Send letter',
      status: 'InProgress',
      type: 'Letter',
      balance: '20.5',
      createdAt: '2026-02-03T10:00:00.000Z',
      updatedAt: '2026-02-04T10:00:00.000Z',
    });
    await seed('dispute', beta, {
      title: 'Call back about the dispute',
      status: 'Done',
      type: 'Call',
      tagIds: [VIP, DISPUTED],
      balance: '999.99',
      createdAt: '2026-02-05T10:00:00.000Z',
      updatedAt: '2026-02-05T18:00:00.000Z',
    });
    await seed('foreign', elsewhere, { title: 'Call elsewhere', createdAt: '2026-02-02T10:00:00.000Z' });
  });
  afterAll(() => sandbox.close());

  const search = (query: Record<string, string | number> = {}, token?: string) =>
    sandbox.call('GET', '/account-tasks/search', { query: { organizationId: org, ...query }, token });
  const names = (body: any) =>
    body.nodes.map((n: any) => Object.entries(task).find(([, id]) => id === n.id)?.[0]);
  const filtered = async (filters: string) => names((await search({ filters })).body);

  it('when searched, then the organization’s tasks come joined to their account, oldest created first', async () => {
    const r = await search();
    expect(r.status).toBe(200);
    expect(names(r.body)).toEqual(['callJane', 'letter', 'dispute']);
    expect(r.body.nodes[0]).toMatchObject({
      title: 'Call Jane',
      accountName: 'Acme',
      status: 'Todo',
      type: 'Call',
      balance: '150.00',
      tags: [{ id: VIP, name: 'VIP' }],
    });
    expect(r.body.nodes[1].balance).toBe('20.50');
  });

  it('when filtered by title or accountName, then text matches ignore case', async () => {
    expect(await filtered('title:contains:CALL')).toEqual(['callJane', 'dispute']);
    expect(await filtered('accountName:equals:beta')).toEqual(['dispute']);
  });

  it('when filtered by status or type, then only those values match; an unknown status is LIST_FILTER_INVALID', async () => {
    expect(await filtered('status:isAnyOf:Todo,InProgress')).toEqual(['callJane', 'letter']);
    expect(await filtered('type:is:Call;status:isNot:Done')).toEqual(['callJane']);
    const bad = await search({ filters: 'status:is:Archived' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when filtered by tags, then containsAny/containsAll/containsNone/isEmpty apply by tag id or name', async () => {
    expect(await filtered(`tags:containsAll:${VIP},${DISPUTED}`)).toEqual(['dispute']);
    expect(await filtered('tags:containsAny:disputed')).toEqual(['dispute']);
    expect(await filtered(`tags:containsNone:${DISPUTED}`)).toEqual(['callJane', 'letter']);
    expect(await filtered('tags:isEmpty')).toEqual(['letter']);
  });

  it('when filtered by balance, createdAt or updatedAt, then numbers and whole days compare', async () => {
    expect(await filtered('balance:between:20,200')).toEqual(['callJane', 'letter']);
    expect(await filtered('balance:greaterThan:150')).toEqual(['dispute']);
    expect(await filtered('createdAt:after:2026-02-01')).toEqual(['letter', 'dispute']);
    expect(await filtered('updatedAt:on:2026-02-05')).toEqual(['dispute']);
  });

  it('when a filter field is not in the allow-list, then 400 LIST_FILTER_INVALID', async () => {
    const r = await search({ filters: 'dueDate:before:2026-03-01' });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when sorted by title or updatedAt desc, then that order is used', async () => {
    expect(names((await search({ sortBy: 'title' })).body)).toEqual(['dispute', 'callJane', 'letter']);
    const recent = await search({ sortBy: 'updatedAt', sortOrder: 'desc' });
    expect(names(recent.body)).toEqual(['callJane', 'dispute', 'letter']);
    expect((await search({ sortBy: 'priority' })).status).toBe(400);
  });

  it('when paged with first=2, then the last non-empty page has an endCursor and the next page is empty', async () => {
    const one = await search({ first: 2 });
    expect(one.body.nodes).toHaveLength(2);
    const two = await search({ first: 2, after: one.body.pageInfo.endCursor });
    expect(names(two.body)).toEqual(['dispute']);
    expect(two.body.pageInfo.endCursor).toEqual(expect.any(String));
    const three = await search({ first: 2, after: two.body.pageInfo.endCursor });
    expect(three.body.nodes).toEqual([]);
  });

  it('when organizationId is missing, then 400', async () => {
    const r = await sandbox.call('GET', '/account-tasks/search');
    expect(r.status).toBe(400);
    expect(r.body.message).toContain('organizationId');
  });

  it('when the token lacks accounts:read and accounts:all, then 403', async () => {
    expect((await search({}, await tokenWith(sandbox, ['profile']))).status).toBe(403);
    expect((await search({}, await tokenWith(sandbox, ['communications:read']))).status).toBe(403);
    expect((await search({}, await tokenWith(sandbox, ['accounts:read']))).status).toBe(200);
  });
});
