import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  ADDRESS,
  accountBody,
  auditOf,
  createAccount,
  createDocument,
  documentForm,
  seedManagedAccount,
} from './accounts-documents-support.js';

describe('accounts: create, read, update, delete', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
  });
  afterAll(() => sandbox.close());

  const post = (body: unknown) => sandbox.call('POST', '/accounts', { body });

  it('when an account is created, then 201 with the account and no source', async () => {
    const created = await post(accountBody(sandbox, 'Acme SAS'));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organizationId: sandbox.organizationId,
      fullName: 'Acme SAS',
      currencyCode: 'EUR',
      billingAddress: ADDRESS,
      source: null,
      lastUnlinkedSource: null,
      readOnlyReason: null,
      tags: [],
    });
    const read = await sandbox.call('GET', `/accounts/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it('when an account is created with a source, then it is linked as Custom with lastUpdate now', async () => {
    const created = await post(
      accountBody(sandbox, 'Linked', { source: { connectionId: 'erp', sourceId: 'C-1' } }),
    );
    expect(created.status).toBe(201);
    expect(created.body.source).toEqual({
      connectionId: 'erp',
      sourceId: 'C-1',
      connectorType: 'Custom',
      lastUpdate: '2026-03-02T09:00:00.000Z',
    });
  });

  it('when the organizationId is missing or not a uuid, then 400 naming it', async () => {
    const missing = await post({ ...accountBody(sandbox, 'X'), organizationId: undefined });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain('organizationId');
    const bad = await post({ ...accountBody(sandbox, 'X'), organizationId: 'nope' });
    expect(bad.status).toBe(400);
  });

  it('when the organization is not visible to the caller, then 404', async () => {
    const res = await post({ ...accountBody(sandbox, 'X'), organizationId: randomUUID() });
    expect(res.status).toBe(404);
  });

  it.each([
    ['currencyCode', { currencyCode: 'euro' }],
    ['currencyCode', { currencyCode: 'eur' }],
    ['fullName', { fullName: '   ' }],
    ['billingAddress.country', { billingAddress: { ...ADDRESS, country: 'FRA' } }],
    ['nickname', { nickname: 'x' }],
  ])('when %s is invalid, then 400 naming the field', async (field, extra) => {
    const res = await post(accountBody(sandbox, 'Invalid', extra));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('BAD_REQUEST');
    expect(res.body.message).toContain(field);
  });

  it('when an account is updated, then only the fields sent change and billingAddress is replaced whole', async () => {
    const account = await createAccount(sandbox, 'Before');
    const res = await sandbox.call('PUT', `/accounts/${account.id}`, {
      body: { fullName: 'After', billingAddress: { city: 'Lyon', country: 'FR' } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      fullName: 'After',
      currencyCode: 'EUR',
      billingAddress: { street: null, city: 'Lyon', postalCode: null, country: 'FR' },
    });
    expect(auditOf(sandbox, 'UpdateAccount').at(-1)?.metadata).toMatchObject({ accountName: 'After' });
  });

  it('when an update carries no known field, then 400', async () => {
    const account = await createAccount(sandbox, 'Empty update');
    expect((await sandbox.call('PUT', `/accounts/${account.id}`, { body: {} })).status).toBe(400);
  });

  it('when an unknown account is read, updated or deleted, then 404', async () => {
    const id = randomUUID();
    expect((await sandbox.call('GET', `/accounts/${id}`)).status).toBe(404);
    expect((await sandbox.call('PUT', `/accounts/${id}`, { body: { fullName: 'x' } })).status).toBe(404);
    expect((await sandbox.call('DELETE', `/accounts/${id}`)).status).toBe(404);
  });

  it('when an account of another organization is read, then 404', async () => {
    const other = await sandbox.admin('POST', '/organizations', { memberUserIds: [] });
    const hidden = await sandbox.admin('POST', '/accounts', { organizationId: other.id, fullName: 'Hidden' });
    expect((await sandbox.call('GET', `/accounts/${hidden.id}`)).status).toBe(404);
  });

  it('when a connector-managed account is updated, then 400 managed-action-forbidden', async () => {
    const managed = await seedManagedAccount(sandbox, 'PL-PUT');
    const res = await sandbox.call('PUT', `/accounts/${managed.id}`, { body: { fullName: 'Renamed' } });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('app-invoicing.document.managed-action-forbidden');
    const read = await sandbox.call('GET', `/accounts/${managed.id}`);
    expect(read.body).toMatchObject({ fullName: 'Pennylane PL-PUT', readOnlyReason: 'Pennylane' });
  });

  it('when a connector-managed account is deleted, then 400 managed-action-forbidden and it stays', async () => {
    const managed = await seedManagedAccount(sandbox, 'PL-DEL');
    const res = await sandbox.call('DELETE', `/accounts/${managed.id}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('app-invoicing.document.managed-action-forbidden');
    expect((await sandbox.call('GET', `/accounts/${managed.id}`)).status).toBe(200);
  });

  it('when an account is deleted, then its documents and tasks go, communications survive marked, audit keeps the name', async () => {
    const account = await createAccount(sandbox, 'Doomed Ltd');
    const invoice = await createDocument(sandbox, '/invoices', documentForm(account.id));
    await sandbox.admin('POST', '/tasks', { accountId: account.id });
    const communication = await sandbox.admin('POST', '/communications', { accountId: account.id });
    const res = await sandbox.call('DELETE', `/accounts/${account.id}`);
    expect(res.status).toBe(204);
    expect((await sandbox.call('GET', `/accounts/${account.id}`)).status).toBe(404);
    expect((await sandbox.call('GET', `/invoices/${invoice.id}`)).status).toBe(404);
    const { store } = sandbox.deps;
    expect([...store.tasks.values()].some((t) => t.accountId === account.id)).toBe(false);
    expect(store.communications.get(communication.id)?.accountDeletedAt).toBe('2026-03-02T09:00:00.000Z');
    const entry = auditOf(sandbox, 'DeleteAccount').at(-1);
    expect(entry?.accountIds).toEqual([account.id]);
    expect(entry?.metadata).toMatchObject({
      accountName: 'Doomed Ltd',
      deletedDocuments: 1,
      deletedTasks: 1,
    });
  });

  it('when an account is deleted twice, then the second answers 404', async () => {
    const account = await createAccount(sandbox, 'Twice');
    expect((await sandbox.call('DELETE', `/accounts/${account.id}`)).status).toBe(204);
    expect((await sandbox.call('DELETE', `/accounts/${account.id}`)).status).toBe(404);
  });

  it('when an account is created, then one CreateAccount audit entry names it', async () => {
    const before = auditOf(sandbox, 'CreateAccount').length;
    const account = await createAccount(sandbox, 'Audited');
    const entries = auditOf(sandbox, 'CreateAccount');
    expect(entries).toHaveLength(before + 1);
    expect(entries.at(-1)).toMatchObject({
      organizationId: sandbox.organizationId,
      actor: { type: 'USER', id: sandbox.seeded.user.id },
      accountIds: [account.id],
      metadata: { accountName: 'Audited' },
    });
  });

  it('when a token has only accounts:read, then writes answer 403 and reads 200', async () => {
    const { accessToken } = await sandbox.admin('POST', '/tokens', { scopes: ['accounts:read'] });
    const account = await createAccount(sandbox, 'Scoped');
    expect((await sandbox.call('GET', `/accounts/${account.id}`, { token: accessToken })).status).toBe(200);
    const write = await sandbox.call('POST', '/accounts', {
      body: accountBody(sandbox, 'No'),
      token: accessToken,
    });
    expect(write.status).toBe(403);
  });
});
