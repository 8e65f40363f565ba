import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREDEFINED_TAGS } from '../../../src/sandbox/store.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { auditOf, createAccount, seedManagedAccount } from './accounts-documents-support.js';

describe('account tags', () => {
  let sandbox: TestSandbox;
  const VIP = PREDEFINED_TAGS[0]!.id;
  const DISPUTED = PREDEFINED_TAGS[1]!.id;
  let custom: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    // A custom tag of the organization, as the tag endpoint would create it.
    custom = randomUUID();
    sandbox.deps.store.tags.set(custom, {
      id: custom,
      organizationId: sandbox.organizationId,
      name: 'Key account',
      kind: 'Custom',
      color: null,
    });
  });
  afterAll(() => sandbox.close());

  const attach = (accountId: string, tagIds: unknown) =>
    sandbox.call('POST', `/accounts/${accountId}/tags`, { body: { tagIds } });
  const detach = (accountId: string, tagId: string) =>
    sandbox.call('DELETE', `/accounts/${accountId}/tags/${tagId}`);
  const tagIdsOf = async (accountId: string) =>
    (await sandbox.call('GET', `/accounts/${accountId}`)).body.tags.map((t: any) => t.id);

  it('when existing tags are attached, then 204 and the account carries them in order', async () => {
    const account = await createAccount(sandbox, 'Tagged');
    const res = await attach(account.id, [custom, VIP]);
    expect(res.status).toBe(204);
    expect(await tagIdsOf(account.id)).toEqual([custom, VIP]);
    const read = await sandbox.call('GET', `/accounts/${account.id}`);
    expect(read.body.tags[0]).toEqual({ id: custom, name: 'Key account', kind: 'Custom' });
    expect(auditOf(sandbox, 'AssignAccountTags').at(-1)?.metadata).toMatchObject({ accountName: 'Tagged' });
  });

  it('when a tag already present is attached again, then nothing changes', async () => {
    const account = await createAccount(sandbox, 'Twice tagged');
    await attach(account.id, [VIP]);
    const res = await attach(account.id, [VIP, VIP]);
    expect(res.status).toBe(204);
    expect(await tagIdsOf(account.id)).toEqual([VIP]);
  });

  it('when an unknown tag comes in the list, then 404 and the tags before it stay attached, those after do not', async () => {
    const account = await createAccount(sandbox, 'Partly tagged');
    const res = await attach(account.id, [VIP, randomUUID(), DISPUTED]);
    expect(res.status).toBe(404);
    expect(res.body.message).toContain('Tag');
    expect(await tagIdsOf(account.id)).toEqual([VIP]);
  });

  it('when a custom tag of another organization is attached, then it is unknown: 404', async () => {
    const foreign = randomUUID();
    sandbox.deps.store.tags.set(foreign, {
      id: foreign,
      organizationId: randomUUID(),
      name: 'Foreign',
      kind: 'Custom',
      color: null,
    });
    const account = await createAccount(sandbox, 'Foreign tag');
    expect((await attach(account.id, [foreign])).status).toBe(404);
  });

  it('when tags are attached to an unknown account, then 404', async () => {
    expect((await attach(randomUUID(), [VIP])).status).toBe(404);
  });

  it.each([[[]], ['VIP'], [[1, 2]], [undefined]])('when tagIds is %j, then 400', async (tagIds) => {
    const account = await createAccount(sandbox, 'Bad tags');
    const res = await attach(account.id, tagIds);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('tagIds');
  });

  it('when a tag is detached, then 204, the account no longer carries it and the tag itself is kept', async () => {
    const account = await createAccount(sandbox, 'Detach');
    await attach(account.id, [custom, VIP]);
    const res = await detach(account.id, custom);
    expect(res.status).toBe(204);
    expect(await tagIdsOf(account.id)).toEqual([VIP]);
    expect(sandbox.deps.store.tags.has(custom)).toBe(true);
  });

  it('when a tag the account does not carry is detached, then 204 and nothing changes', async () => {
    const account = await createAccount(sandbox, 'Detach absent');
    await attach(account.id, [VIP]);
    expect((await detach(account.id, DISPUTED)).status).toBe(204);
    expect(await tagIdsOf(account.id)).toEqual([VIP]);
  });

  it('when a tag is detached from an unknown account, then 404', async () => {
    expect((await detach(randomUUID(), VIP)).status).toBe(404);
  });

  it('when a connector-managed account is tagged, then it is accepted (tags are not connector data)', async () => {
    const managed = await seedManagedAccount(sandbox, 'PL-TAG');
    expect((await attach(managed.id, [VIP])).status).toBe(204);
    expect(await tagIdsOf(managed.id)).toEqual([VIP]);
  });
});
