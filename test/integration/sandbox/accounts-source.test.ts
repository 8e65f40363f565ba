import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { accountBody, auditOf, createAccount, seedManagedAccount } from './accounts-documents-support.js';

const MANAGED = 'app-invoicing.document.managed-action-forbidden';
const NOW = '2026-03-02T09:00:00.000Z';

describe('account source transitions', () => {
  const clock = new ManualClock(NOW);
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
  });
  afterAll(() => sandbox.close());

  const source = (accountId: string) => `/accounts/${accountId}/source`;
  const put = (id: string, body: unknown) => sandbox.call('PUT', source(id), { body });
  const patch = (id: string, body?: unknown) => sandbox.call('PATCH', source(id), { body });
  const unlink = (id: string) => sandbox.call('DELETE', source(id));

  it('when a source is PUT on an account without one, then it is linked as Custom with lastUpdate now', async () => {
    const account = await createAccount(sandbox, 'No source');
    const res = await put(account.id, { connectionId: 'erp', sourceId: 'S-1' });
    expect(res.status).toBe(200);
    expect(res.body.source).toEqual({
      connectionId: 'erp',
      sourceId: 'S-1',
      connectorType: 'Custom',
      lastUpdate: NOW,
    });
    expect(auditOf(sandbox, 'LinkAccountSource').at(-1)?.metadata).toMatchObject({
      accountName: 'No source',
    });
  });

  it('when a source is PUT with a lastUpdate, then that lastUpdate is kept (normalized to UTC)', async () => {
    const account = await createAccount(sandbox, 'Given lastUpdate');
    const res = await put(account.id, {
      connectionId: 'erp',
      sourceId: 'S-2',
      lastUpdate: '2026-02-01T10:00:00+01:00',
    });
    expect(res.body.source.lastUpdate).toBe('2026-02-01T09:00:00.000Z');
  });

  it('when the same source is PUT again, then only lastUpdate changes, no error', async () => {
    const account = await createAccount(sandbox, 'Same source');
    await put(account.id, { connectionId: 'erp', sourceId: 'S-3', lastUpdate: '2026-01-01T00:00:00Z' });
    const res = await put(account.id, { connectionId: 'erp', sourceId: 'S-3' });
    expect(res.status).toBe(200);
    expect(res.body.source).toEqual({
      connectionId: 'erp',
      sourceId: 'S-3',
      connectorType: 'Custom',
      lastUpdate: NOW,
    });
  });

  it('when a different source is PUT while linked, then 400 and the current source stays', async () => {
    const account = await createAccount(sandbox, 'Relink', {
      source: { connectionId: 'erp', sourceId: 'S-4' },
    });
    const res = await put(account.id, { connectionId: 'erp', sourceId: 'S-4b' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('app-invoicing.account.source-already-linked');
    expect((await sandbox.call('GET', `/accounts/${account.id}`)).body.source.sourceId).toBe('S-4');
  });

  it('when the source is unlinked first, then another source can be linked', async () => {
    const account = await createAccount(sandbox, 'Unlink then link', {
      source: { connectionId: 'erp', sourceId: 'S-5' },
    });
    expect((await unlink(account.id)).status).toBe(204);
    const res = await put(account.id, { connectionId: 'erp', sourceId: 'S-5b' });
    expect(res.status).toBe(200);
    expect(res.body.source.sourceId).toBe('S-5b');
  });

  it('when a source is PATCHed with {}, then lastUpdate becomes now', async () => {
    const account = await createAccount(sandbox, 'Patch', {
      source: { connectionId: 'erp', sourceId: 'S-6' },
    });
    clock.advance(60_000);
    const res = await patch(account.id, {});
    expect(res.status).toBe(200);
    expect(res.body.source).toMatchObject({ sourceId: 'S-6', lastUpdate: '2026-03-02T09:01:00.000Z' });
    clock.set(NOW);
  });

  it('when a source is PATCHed with a lastUpdate, then it is set', async () => {
    const account = await createAccount(sandbox, 'Patch given', {
      source: { connectionId: 'erp', sourceId: 'S-7' },
    });
    const res = await patch(account.id, { lastUpdate: '2026-02-20T08:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.source.lastUpdate).toBe('2026-02-20T08:00:00.000Z');
  });

  it('when PATCH carries an invalid lastUpdate, then 400 naming it', async () => {
    const account = await createAccount(sandbox, 'Patch bad', {
      source: { connectionId: 'erp', sourceId: 'S-8' },
    });
    for (const lastUpdate of ['yesterday', '2026-02-30T00:00:00Z', 12]) {
      const res = await patch(account.id, { lastUpdate });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain('lastUpdate');
    }
  });

  it('when PATCH targets an account without a source, then 404', async () => {
    const account = await createAccount(sandbox, 'Patch none');
    expect((await patch(account.id, {})).status).toBe(404);
  });

  it('when a Custom source is unlinked, then source is null and lastUnlinkedSource holds it', async () => {
    const account = await createAccount(sandbox, 'Orphan', {
      source: { connectionId: 'erp', sourceId: 'S-9' },
    });
    expect((await unlink(account.id)).status).toBe(204);
    const read = await sandbox.call('GET', `/accounts/${account.id}`);
    expect(read.body.source).toBeNull();
    expect(read.body.lastUnlinkedSource).toMatchObject({
      connectionId: 'erp',
      sourceId: 'S-9',
      connectorType: 'Custom',
    });
    expect(auditOf(sandbox, 'UnlinkAccountSource').at(-1)?.metadata).toMatchObject({ accountName: 'Orphan' });
  });

  it('when DELETE targets an account without a source, then 404', async () => {
    const account = await createAccount(sandbox, 'Unlink none');
    expect((await unlink(account.id)).status).toBe(404);
  });

  it('when the account is unknown, then PUT, PATCH and DELETE answer 404', async () => {
    const id = randomUUID();
    expect((await put(id, { connectionId: 'erp', sourceId: 'x' })).status).toBe(404);
    expect((await patch(id, {})).status).toBe(404);
    expect((await unlink(id)).status).toBe(404);
  });

  it('when the account is connector-managed, then PUT, PATCH and DELETE source answer 400 managed-action-forbidden', async () => {
    const managed = await seedManagedAccount(sandbox, 'PL-SRC');
    const same = { connectionId: 'pl-1', sourceId: 'PL-SRC' };
    for (const res of [await put(managed.id, same), await patch(managed.id, {}), await unlink(managed.id)]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(MANAGED);
    }
    const read = await sandbox.call('GET', `/accounts/${managed.id}`);
    expect(read.body.source).toMatchObject({
      connectorType: 'Pennylane',
      lastUpdate: '2026-01-01T00:00:00.000Z',
    });
  });

  it('when PUT source misses connectionId or sourceId, then 400 naming it', async () => {
    const account = await createAccount(sandbox, 'Bad body');
    const noSource = await put(account.id, { connectionId: 'erp' });
    expect(noSource.status).toBe(400);
    expect(noSource.body.message).toContain('sourceId');
    const noConnection = await put(account.id, { sourceId: 'x' });
    expect(noConnection.body.message).toContain('connectionId');
  });

  it('when a source already linked to another account of the organization is linked, then 400 duplicate-source', async () => {
    await createAccount(sandbox, 'Owner', { source: { connectionId: 'erp', sourceId: 'DUP-1' } });
    const created = await sandbox.call('POST', '/accounts', {
      body: accountBody(sandbox, 'Copy', { source: { connectionId: 'erp', sourceId: 'DUP-1' } }),
    });
    expect(created.status).toBe(400);
    expect(created.body.code).toBe('app-invoicing.account.duplicate-source');
    const other = await createAccount(sandbox, 'Copy by PUT');
    const linked = await put(other.id, { connectionId: 'erp', sourceId: 'DUP-1' });
    expect(linked.status).toBe(400);
    expect(linked.body.code).toBe('app-invoicing.account.duplicate-source');
  });

  it('when the same sourceId is used on another connection or in another organization, then it is accepted', async () => {
    await createAccount(sandbox, 'Conn A', { source: { connectionId: 'erp', sourceId: 'SHARED' } });
    await createAccount(sandbox, 'Conn B', { source: { connectionId: 'crm', sourceId: 'SHARED' } });
    const org = await sandbox.admin('POST', '/organizations', { memberUserIds: [sandbox.seeded.user.id] });
    const res = await sandbox.call('POST', '/accounts', {
      body: {
        ...accountBody(sandbox, 'Other org'),
        organizationId: org.id,
        source: { connectionId: 'erp', sourceId: 'SHARED' },
      },
    });
    expect(res.status).toBe(201);
  });

  it('when source ids differ only by case, then they are different sources', async () => {
    await createAccount(sandbox, 'Lower', { source: { connectionId: 'erp', sourceId: 'case-x' } });
    const res = await sandbox.call('POST', '/accounts', {
      body: accountBody(sandbox, 'Upper', { source: { connectionId: 'erp', sourceId: 'CASE-X' } }),
    });
    expect(res.status).toBe(201);
  });

  it('when an account with a Custom source is updated, then the write is accepted (readOnlyReason stays null)', async () => {
    const account = await createAccount(sandbox, 'Custom writable', {
      source: { connectionId: 'erp', sourceId: 'W-1' },
    });
    expect(account.readOnlyReason).toBeNull();
    const res = await sandbox.call('PUT', `/accounts/${account.id}`, {
      body: { fullName: 'Custom renamed' },
    });
    expect(res.status).toBe(200);
  });
});
