import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  auditOf,
  createAccount,
  createDocument,
  creditNoteForm,
  documentForm,
} from './accounts-documents-support.js';

const MANAGED = 'app-invoicing.document.managed-action-forbidden';

describe('PATCH /invoices/{id}, PATCH /credit-notes/{id} and upserts by sourceId', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  let account: any;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    account = await createAccount(sandbox, 'Patch Ltd');
  });
  afterAll(() => sandbox.close());

  const invoice = (fields: Record<string, string> = {}) =>
    createDocument(sandbox, '/invoices', documentForm(account.id, fields));
  const patch = (path: string, body: unknown) => sandbox.call('PATCH', path, { body });

  it('when a paid amount is patched, then remainingBalance and status follow', async () => {
    const doc = await invoice({ totalAmount: '120.00' });
    const partly = await patch(`/invoices/${doc.id}`, { paidAmount: '20.5' });
    expect(partly.status).toBe(200);
    expect(partly.body).toMatchObject({ paidAmount: '20.50', remainingBalance: '99.50', status: 'Overdue' });
    const paid = await patch(`/invoices/${doc.id}`, { paidAmount: '120.00' });
    expect(paid.body).toMatchObject({ remainingBalance: '0.00', status: 'Paid' });
    expect(auditOf(sandbox, 'UpdateInvoice').at(-1)?.metadata).toMatchObject({
      accountName: 'Patch Ltd',
      documentId: doc.id,
    });
  });

  it('when the same PATCH is sent twice, then the second gives the same document (safe to repeat)', async () => {
    const doc = await invoice();
    const first = await patch(`/invoices/${doc.id}`, { paidAmount: '10.00' });
    const second = await patch(`/invoices/${doc.id}`, { paidAmount: '10.00' });
    expect({ ...second.body, updatedAt: undefined }).toEqual({ ...first.body, updatedAt: undefined });
  });

  it('when a due date is patched into the future, then an overdue invoice becomes Issued', async () => {
    const doc = await invoice();
    expect(doc.status).toBe('Overdue');
    const res = await patch(`/invoices/${doc.id}`, { dueDate: { year: 2026, month: 4, day: 30 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dueDate: { year: 2026, month: 4, day: 30 }, status: 'Issued' });
  });

  it.each([
    ['paidAmount', { paidAmount: '120.01' }],
    ['paidAmount', { paidAmount: '-1' }],
    ['paidAmount', { paidAmount: 10 }],
    ['dueDate.day', { dueDate: { year: 2026, month: 2, day: 30 } }],
    ['dueDate.month', { dueDate: { year: 2026, month: 13, day: 1 } }],
    ['dueDate', { dueDate: '2026-04-30' }],
    ['sourceId', { sourceId: 'changed' }],
    ['paidAmount', {}],
  ])('when the invoice PATCH has an invalid %s, then 400 naming it', async (field, body) => {
    const doc = await invoice({ totalAmount: '120.00' });
    const res = await patch(`/invoices/${doc.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body.message).toContain(field);
  });

  it('when a credit note allocation is patched, then remainingAmount and status follow', async () => {
    const note = await createDocument(
      sandbox,
      '/credit-notes',
      creditNoteForm(account.id, { totalAmount: '60.00' }),
    );
    const part = await patch(`/credit-notes/${note.id}`, { paidAmount: '20' });
    expect(part.body).toMatchObject({ remainingAmount: '40.00', status: 'PartiallyAllocated' });
    const full = await patch(`/credit-notes/${note.id}`, { paidAmount: '60' });
    expect(full.body).toMatchObject({ remainingAmount: '0.00', status: 'Allocated' });
  });

  it('when a credit note PATCH carries a dueDate, then 400', async () => {
    const note = await createDocument(sandbox, '/credit-notes', creditNoteForm(account.id));
    const res = await patch(`/credit-notes/${note.id}`, { dueDate: { year: 2026, month: 4, day: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('dueDate');
  });

  it('when a connector-managed document is patched, then 400 managed-action-forbidden and nothing changes', async () => {
    const seeded = await sandbox.admin('POST', '/documents', {
      accountId: account.id,
      readOnlyReason: 'Pennylane',
      channel: 'Pennylane',
      connectionId: 'pl-1',
    });
    const res = await patch(`/invoices/${seeded.id}`, { paidAmount: '1.00' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(MANAGED);
    expect((await sandbox.call('GET', `/invoices/${seeded.id}`)).body.paidAmount).toBe('0.00');
  });

  it('when the document is unknown or of the other kind, then 404', async () => {
    expect((await patch(`/invoices/${randomUUID()}`, { paidAmount: '1' })).status).toBe(404);
    const doc = await invoice();
    expect((await patch(`/credit-notes/${doc.id}`, { paidAmount: '1' })).status).toBe(404);
  });

  const upsert = (path: string, sourceId: string, form: FormData) =>
    sandbox.call('PUT', `${path}/by-source-id/${encodeURIComponent(sourceId)}`, { body: form });

  it('when an upsert names a new sourceId, then 201 creates it; again, then 200 updates the same document', async () => {
    const created = await upsert('/invoices', 'UP/1', documentForm(account.id, { number: 'UP-1' }));
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ sourceId: 'UP/1', number: 'UP-1', channel: 'PublicApi' });
    const updated = await upsert(
      '/invoices',
      'UP/1',
      documentForm(account.id, { number: 'UP-1', totalAmount: '150.00' }),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, totalAmount: '150.00', sourceId: 'UP/1' });
    const found = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: `sourceId:is:${encodeURIComponent('UP/1')}` },
    });
    expect(found.body.nodes).toHaveLength(1);
  });

  it('when an upsert form carries another sourceId or account, then 400', async () => {
    await upsert('/invoices', 'UP-2', documentForm(account.id, { number: 'UP-2' }));
    const other = await upsert(
      '/invoices',
      'UP-2',
      documentForm(account.id, { number: 'UP-2', sourceId: 'UP-3' }),
    );
    expect(other.status).toBe(400);
    const elsewhere = await createAccount(sandbox, 'Elsewhere Ltd');
    const moved = await upsert('/invoices', 'UP-2', documentForm(elsewhere.id, { number: 'UP-2' }));
    expect(moved.status).toBe(400);
    expect(moved.body.code).toBe('app-invoicing.invoice.account-mismatch');
  });

  it('when an upsert renames to a number taken on the account, then 400 duplicate-number', async () => {
    await invoice({ number: 'TAKEN' });
    await upsert('/invoices', 'UP-4', documentForm(account.id, { number: 'UP-4' }));
    const res = await upsert('/invoices', 'UP-4', documentForm(account.id, { number: 'TAKEN' }));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('app-invoicing.invoice.duplicate-number');
  });

  it('when an upsert targets a connector-managed document, then 400 managed-action-forbidden', async () => {
    await sandbox.admin('POST', '/documents', {
      accountId: account.id,
      sourceId: 'PL-DOC',
      readOnlyReason: 'Pennylane',
    });
    const res = await upsert('/invoices', 'PL-DOC', documentForm(account.id));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(MANAGED);
  });

  it('when a credit note is upserted, then it is created and then updated', async () => {
    const created = await upsert('/credit-notes', 'CN-UP', creditNoteForm(account.id, { number: 'CN-UP' }));
    expect(created.status).toBe(201);
    const updated = await upsert(
      '/credit-notes',
      'CN-UP',
      creditNoteForm(account.id, { number: 'CN-UP', totalAmount: '80.00' }),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, remainingAmount: '80.00' });
  });
});
