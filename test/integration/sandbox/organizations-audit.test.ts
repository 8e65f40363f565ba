import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

/** An account that no longer exists: its history must survive in the journal. */
const DELETED_ACCOUNT = '3a1f8e2b-7c4d-4e5f-9a6b-0c1d2e3f4a5b';
const OTHER_ACCOUNT = '9b8c7d6e-5f4a-4b3c-8d2e-1f0a9b8c7d6e';

describe('GET /organizations/{id}/audit', () => {
  let sandbox: TestSandbox;
  let path: string;
  const clock = new ManualClock('2026-03-01T09:00:00.000Z');
  const audit = (query: Record<string, string | number> = {}, token?: string) =>
    sandbox.call('GET', path, { query, token });
  const seed = async (actorType: string, action: string, extra: Record<string, unknown> = {}) => {
    clock.advance(1000);
    return sandbox.admin('POST', '/audit', {
      organizationId: sandbox.organizationId,
      actor: { type: actorType, id: `${actorType.toLowerCase()}-1`, name: `${actorType} actor` },
      action,
      ...extra,
    });
  };

  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    path = `/organizations/${sandbox.organizationId}/audit`;
    await seed('AGENT', 'SendReminder', {
      accountIds: [DELETED_ACCOUNT],
      metadata: { accountName: 'Dupont SARL', channel: 'Email' },
    });
    await seed('SYSTEM', 'DeleteAccount', {
      accountIds: [DELETED_ACCOUNT],
      metadata: { accountName: 'Dupont SARL' },
    });
    await seed('SERVICE_ACCOUNT', 'CreateAccount', {
      accountIds: [OTHER_ACCOUNT],
      metadata: { accountName: 'Martin & Fils', details: { city: 'Lyon' } },
    });
    clock.advance(1000);
    await sandbox.call('PUT', `/organizations/${sandbox.organizationId}`, { body: { name: 'Audited Org' } });
  });
  afterAll(() => sandbox.close());

  it('when read without parameters, then entries come newest first with page 1 and limit 20', async () => {
    const r = await audit();
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ page: 1, limit: 20, total: 4 });
    expect(r.body.items.map((e: any) => e.action)).toEqual([
      'UpdateOrganization',
      'CreateAccount',
      'DeleteAccount',
      'SendReminder',
    ]);
  });

  it('when a command succeeds through the API, then one entry records it with a USER actor', async () => {
    const [latest] = (await audit({ limit: 1 })).body.items;
    expect(latest).toMatchObject({
      action: 'UpdateOrganization',
      actor: { type: 'USER', id: sandbox.seeded.user.id, name: 'Sandbox Owner' },
      metadata: { name: 'Audited Org' },
      accountIds: [],
    });
    expect(latest.id).toEqual(expect.any(String));
    expect(latest.createdAt).toBe('2026-03-01T09:00:04.000Z');
  });

  it('when a command fails, then no entry is recorded', async () => {
    await sandbox.call('PUT', `/organizations/${sandbox.organizationId}`, { body: {} });
    expect((await audit()).body.total).toBe(4);
  });

  it('when paged with limit and page, then the pages slice the newest-first order', async () => {
    const second = await audit({ limit: 2, page: 2 });
    expect(second.body.items.map((e: any) => e.action)).toEqual(['DeleteAccount', 'SendReminder']);
    expect((await audit({ limit: 2, page: 3 })).body.items).toEqual([]);
  });

  it.each([
    ['page=0', { page: 0 }],
    ['page=x', { page: 'x' }],
    ['limit=0', { limit: 0 }],
    ['limit=101', { limit: 101 }],
    ['limit=1.5', { limit: '1.5' }],
    ['accountId not a uuid', { accountId: 'acc-1' }],
    ['an unknown actor type', { actorTypes: 'ROBOT' }],
  ])('when %s, then 400', async (_label, query) => {
    const r = await audit(query);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('BAD_REQUEST');
  });

  it('when limit=100, then it is accepted', async () => {
    expect((await audit({ limit: 100 })).body.limit).toBe(100);
  });

  it('when actorTypes is repeated, then entries of any of those actor types are returned', async () => {
    const url = new URL(`/api/public/v1${path}?actorTypes=AGENT&actorTypes=SYSTEM`, sandbox.baseUrl);
    const r = await fetch(url, { headers: { authorization: `Bearer ${sandbox.accessToken}` } });
    const body: any = await r.json();
    expect(body.items.map((e: any) => e.actor.type)).toEqual(['SYSTEM', 'AGENT']);
  });

  it('when actorTypes is comma-separated, then it works like the repeated form', async () => {
    const r = await audit({ actorTypes: 'SERVICE_ACCOUNT,USER' });
    expect(r.body.items.map((e: any) => e.actor.type)).toEqual(['USER', 'SERVICE_ACCOUNT']);
  });

  it('when filtered by action, then only that command name is returned', async () => {
    const r = await audit({ action: 'DeleteAccount' });
    expect(r.body.items).toHaveLength(1);
    expect(r.body.items[0].actor.type).toBe('SYSTEM');
  });

  it('when filtered by the id of a deleted account, then its whole history is returned', async () => {
    const r = await audit({ accountId: DELETED_ACCOUNT });
    expect(r.body.items.map((e: any) => e.action)).toEqual(['DeleteAccount', 'SendReminder']);
    expect(r.body.items[0].metadata.accountName).toBe('Dupont SARL');
  });

  it('when searching in another case, then metadata values match anywhere, nested ones included', async () => {
    expect((await audit({ search: 'DUPONT' })).body.total).toBe(2);
    expect((await audit({ search: 'pont s' })).body.total).toBe(2);
    expect((await audit({ search: 'lyon' })).body.items[0].action).toBe('CreateAccount');
    expect((await audit({ search: 'nowhere' })).body.items).toEqual([]);
  });

  it('when searching for an audited account id, then its entries match', async () => {
    const r = await audit({ search: OTHER_ACCOUNT.toUpperCase() });
    expect(r.body.items.map((e: any) => e.action)).toEqual(['CreateAccount']);
  });

  it('when filters are combined, then all of them apply', async () => {
    const r = await audit({ accountId: DELETED_ACCOUNT, actorTypes: 'AGENT', search: 'email' });
    expect(r.body.items.map((e: any) => e.action)).toEqual(['SendReminder']);
  });

  it('when the organization is not the user’s, then 404', async () => {
    const other = await sandbox.admin('POST', '/organizations', { name: 'Foreign' });
    expect((await sandbox.call('GET', `/organizations/${other.id}/audit`)).status).toBe(404);
  });

  it('when the token has organizations:read, then 200; with accounts scopes only, then 403', async () => {
    const read = await sandbox.admin('POST', '/tokens', { scopes: ['organizations:read'] });
    expect((await audit({}, read.accessToken)).status).toBe(200);
    const accounts = await sandbox.admin('POST', '/tokens', { scopes: ['accounts:all'] });
    expect((await audit({}, accounts.accessToken)).status).toBe(403);
  });
});
