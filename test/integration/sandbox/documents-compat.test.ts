import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { createAccount, createDocument, creditNoteForm, documentForm } from './accounts-documents-support.js';

/**
 * The sandbox's switches for what the spec does not show of the document write ("a PATCH that sets
 * a paid amount or a due date ... exists; paths and bodies not shown") and of paid creations: with
 * another route, the contract's is not served, so a client on the wrong setting sees it at once.
 */
describe('a sandbox whose document write is PUT /{kind}/{id}/payment {amountPaid, dueOn}', () => {
  let sandbox: TestSandbox;
  let account: any;
  beforeAll(async () => {
    sandbox = await startTestSandbox({
      compat: {
        documentPatch: {
          method: 'PUT',
          path: '/{kind}/{id}/payment',
          paidAmountField: 'amountPaid',
          dueDateField: 'dueOn',
        },
      },
    });
    account = await createAccount(sandbox, 'Compat Ltd');
  });
  afterAll(() => sandbox.close());

  it('when the configured route is called with its field names, then the paid amount and due date change', async () => {
    const doc = await createDocument(sandbox, '/invoices', documentForm(account.id));
    const res = await sandbox.call('PUT', `/invoices/${doc.id}/payment`, {
      body: { amountPaid: '20.00', dueOn: { year: 2027, month: 1, day: 31 } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ paidAmount: '20.00', dueDate: { year: 2027, month: 1, day: 31 } });
    const note = await createDocument(sandbox, '/credit-notes', creditNoteForm(account.id));
    const allocated = await sandbox.call('PUT', `/credit-notes/${note.id}/payment`, {
      body: { amountPaid: '5.00' },
    });
    expect(allocated.body).toMatchObject({ paidAmount: '5.00' });
  });

  it("when the contract's PATCH /invoices/{id} is sent, then it is an unknown route (404), and nothing changes", async () => {
    const doc = await createDocument(sandbox, '/invoices', documentForm(account.id));
    const res = await sandbox.call('PATCH', `/invoices/${doc.id}`, { body: { paidAmount: '20.00' } });
    expect(res.status).toBe(404);
    expect(res.body.message).toMatch(/^Route PATCH .* not found$/);
    expect(sandbox.deps.store.documents.get(doc.id)?.paidAmount).toBe('0.00');
  });

  it("when the contract's field names are sent to the configured route, then they are refused by name (400)", async () => {
    const doc = await createDocument(sandbox, '/invoices', documentForm(account.id));
    const res = await sandbox.call('PUT', `/invoices/${doc.id}/payment`, { body: { paidAmount: '20.00' } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('paidAmount');
  });

  it('when the id is unknown, then the configured route answers 404 for the document, not for the route', async () => {
    const res = await sandbox.call('PUT', '/invoices/00000000-0000-4000-8000-000000000000/payment', {
      body: { amountPaid: '0' },
    });
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('Invoice not found');
  });
});

describe('a sandbox whose document write has no {kind} in its path: POST /documents/{id}', () => {
  let sandbox: TestSandbox;
  let account: any;
  beforeAll(async () => {
    sandbox = await startTestSandbox({
      compat: { documentPatch: { method: 'POST', path: '/documents/{id}' } },
    });
    account = await createAccount(sandbox, 'One Route Ltd');
  });
  afterAll(() => sandbox.close());

  it('when either kind is written through the one route, then each takes its own rules', async () => {
    const invoice = await createDocument(sandbox, '/invoices', documentForm(account.id));
    const note = await createDocument(sandbox, '/credit-notes', creditNoteForm(account.id));
    const paid = await sandbox.call('POST', `/documents/${invoice.id}`, { body: { paidAmount: '120.00' } });
    expect(paid.body).toMatchObject({ paidAmount: '120.00', status: 'Paid' });
    const dated = await sandbox.call('POST', `/documents/${note.id}`, {
      body: { dueDate: { year: 2027, month: 1, day: 1 } },
    });
    expect(dated.status).toBe(400);
    expect(dated.body.message).toContain('has no due date');
  });
});

describe('documents created already paid (compat.createPaid)', () => {
  let paying: TestSandbox;
  let strict: TestSandbox;
  beforeAll(async () => {
    paying = await startTestSandbox({ compat: { createPaid: true, createPaidField: 'amountPaid' } });
    strict = await startTestSandbox();
  });
  afterAll(async () => {
    await paying.close();
    await strict.close();
  });

  it('when the server takes a paid amount at creation, then the invoice is created with it', async () => {
    const account = await createAccount(paying, 'Paid Ltd');
    const doc = await createDocument(paying, '/invoices', documentForm(account.id, { amountPaid: '30.5' }));
    expect(doc).toMatchObject({ paidAmount: '30.50', remainingBalance: '89.50' });
    const unpaid = await createDocument(paying, '/invoices', documentForm(account.id));
    expect(unpaid.paidAmount).toBe('0.00');
    const over = await paying.call('POST', '/invoices', {
      body: documentForm(account.id, { amountPaid: '120.01' }),
    });
    expect(over.status).toBe(400);
    expect(over.body.message).toContain('amountPaid must be from 0 to the totalAmount');
  });

  it('when the server does not take one (the default), then a paid amount in the form is an unknown field (400)', async () => {
    const account = await createAccount(strict, 'Strict Ltd');
    const res = await strict.call('POST', '/invoices', {
      body: documentForm(account.id, { paidAmount: '30' }),
    });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain('paidAmount');
  });
});
