import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { PDF_BYTES, startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import {
  ADDRESS,
  auditOf,
  createAccount,
  createDocument,
  creditNoteForm,
  documentForm,
  seedManagedAccount,
} from './accounts-documents-support.js';

describe('POST /invoices and POST /credit-notes', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  let account: any;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    account = await createAccount(sandbox, 'Documents Ltd');
  });
  afterAll(() => sandbox.close());

  const postInvoice = (form: FormData) => sandbox.call('POST', '/invoices', { body: form });
  const postCreditNote = (form: FormData) => sandbox.call('POST', '/credit-notes', { body: form });
  const expect400 = (res: { status: number; body: any }, field: string, code = 'BAD_REQUEST') => {
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe(code);
    expect(res.body.message).toContain(field);
  };

  it('when an invoice is created, then 201 with channel PublicApi, connectionId null and derived amounts', async () => {
    const res = await postInvoice(documentForm(account.id, { number: 'INV-1', sourceId: 'erp-inv-1' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      accountId: account.id,
      number: 'INV-1',
      issuedDate: { year: 2026, month: 1, day: 15 },
      dueDate: { year: 2026, month: 2, day: 14 },
      totalAmount: '120.00',
      taxAmount: '20.00',
      paidAmount: '0.00',
      remainingBalance: '120.00',
      status: 'Overdue',
      sourceId: 'erp-inv-1',
      channel: 'PublicApi',
      connectionId: null,
      readOnlyReason: null,
      billingAddress: ADDRESS,
      file: { mimeType: 'application/pdf', size: PDF_BYTES.length },
    });
    expect((await sandbox.call('GET', `/invoices/${res.body.id}`)).body).toEqual(res.body);
    expect(auditOf(sandbox, 'CreateInvoice').at(-1)?.metadata).toMatchObject({
      accountName: 'Documents Ltd',
      number: 'INV-1',
      sourceId: 'erp-inv-1',
    });
  });

  it('when the due date is today or later, then the invoice is Issued', async () => {
    const form = documentForm(account.id, { 'dueDate.month': '3', 'dueDate.day': '2' });
    expect((await createDocument(sandbox, '/invoices', form)).status).toBe('Issued');
  });

  it('when billing address parts are sent, then they replace the account ones part by part', async () => {
    const form = documentForm(account.id, { 'billingAddress.city': 'Lyon', 'billingAddress.country': 'FR' });
    const invoice = await createDocument(sandbox, '/invoices', form);
    expect(invoice.billingAddress).toEqual({ ...ADDRESS, city: 'Lyon' });
  });

  it.each([
    ['issuedDate.month', { 'issuedDate.month': '13' }],
    ['issuedDate.month', { 'issuedDate.month': '0' }],
    ['dueDate.day', { 'dueDate.month': '2', 'dueDate.day': '30' }],
    ['dueDate.day', { 'dueDate.day': '1.5' }],
    ['issuedDate.year', { 'issuedDate.year': undefined }],
    ['dueDate.month', { 'dueDate.month': undefined }],
  ])('when the date part %s is invalid or missing, then 400 naming it', async (field, fields) => {
    expect400(await postInvoice(documentForm(account.id, fields)), field);
  });

  it('when February 29 is sent in a leap year, then it is accepted', async () => {
    const form = documentForm(account.id, {
      'issuedDate.year': '2028',
      'issuedDate.month': '2',
      'issuedDate.day': '29',
    });
    expect((await postInvoice(form)).status).toBe(201);
  });

  it.each([
    ['totalAmount', { totalAmount: '12,50' }],
    ['totalAmount', { totalAmount: '-5.00' }],
    ['taxAmount', { taxAmount: undefined }],
    ['taxAmount', { totalAmount: '10.00', taxAmount: '20.00' }],
    ['number', { number: '' }],
    ['accountId', { accountId: undefined }],
    ['billingAddress.country', { 'billingAddress.country': 'France' }],
    ['paidAmount', { paidAmount: '10.00' }],
  ])('when %s is invalid, then 400 naming it', async (field, fields) => {
    expect400(await postInvoice(documentForm(account.id, fields)), field);
  });

  it('when the file is missing, is not a PDF or is a text field, then 400 naming file', async () => {
    expect400(await postInvoice(documentForm(account.id, {}, null)), 'file');
    expect400(await postInvoice(documentForm(account.id, {}, Buffer.from('<svg/>'))), 'file');
    expect400(await postInvoice(documentForm(account.id, { file: 'not a file' }, null)), 'file');
  });

  it('when the invoice is sent as JSON, then 400 (multipart required)', async () => {
    const res = await sandbox.call('POST', '/invoices', { body: { accountId: account.id, number: 'J-1' } });
    expect400(res, 'multipart');
  });

  it('when the account is unknown, then 404; when connector-managed, then 400 managed-action-forbidden', async () => {
    expect((await postInvoice(documentForm(randomUUID()))).status).toBe(404);
    const managed = await seedManagedAccount(sandbox, 'PL-DOC');
    const res = await postInvoice(documentForm(managed.id));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('app-invoicing.document.managed-action-forbidden');
  });

  it('when a number is reused on the same account, then 400; on another account, then accepted', async () => {
    await createDocument(sandbox, '/invoices', documentForm(account.id, { number: 'SAME-1' }));
    expect400(
      await postInvoice(documentForm(account.id, { number: 'SAME-1' })),
      'SAME-1',
      'app-invoicing.invoice.duplicate-number',
    );
    const other = await createAccount(sandbox, 'Namesake Ltd');
    expect((await postInvoice(documentForm(other.id, { number: 'SAME-1' }))).status).toBe(201);
  });

  it('when a sourceId is reused in the organization, then 400 duplicate-source-id, even on another account', async () => {
    await createDocument(sandbox, '/invoices', documentForm(account.id, { sourceId: 'DUP-SRC' }));
    const other = await createAccount(sandbox, 'Other account Ltd');
    const res = await postInvoice(documentForm(other.id, { sourceId: 'DUP-SRC' }));
    expect400(res, 'DUP-SRC', 'app-invoicing.invoice.duplicate-source-id');
  });

  it('when a sourceId differs only by case, then it is another document', async () => {
    await createDocument(sandbox, '/invoices', documentForm(account.id, { sourceId: 'case-src' }));
    expect((await postInvoice(documentForm(account.id, { sourceId: 'CASE-SRC' }))).status).toBe(201);
  });

  it('when the same sourceId is used in another organization, then it is accepted', async () => {
    await createDocument(sandbox, '/invoices', documentForm(account.id, { sourceId: 'CROSS-ORG' }));
    const org = await sandbox.admin('POST', '/organizations', { memberUserIds: [sandbox.seeded.user.id] });
    const foreign = await createAccount(sandbox, 'Foreign Ltd', { organizationId: org.id });
    expect((await postInvoice(documentForm(foreign.id, { sourceId: 'CROSS-ORG' }))).status).toBe(201);
  });

  it('when a credit note is created, then 201 without dueDate, with remainingAmount and status Unallocated', async () => {
    const res = await postCreditNote(creditNoteForm(account.id, { number: 'CN-1', sourceId: 'erp-cn-1' }));
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      number: 'CN-1',
      remainingAmount: '120.00',
      status: 'Unallocated',
      channel: 'PublicApi',
      connectionId: null,
      sourceId: 'erp-cn-1',
    });
    expect(res.body).not.toHaveProperty('dueDate');
    expect((await sandbox.call('GET', `/credit-notes/${res.body.id}`)).body).toEqual(res.body);
    expect(auditOf(sandbox, 'CreateCreditNote').at(-1)?.metadata).toMatchObject({
      accountName: 'Documents Ltd',
    });
  });

  it('when a credit note reuses a sourceId, then 400 credit-note duplicate-source-id', async () => {
    await createDocument(sandbox, '/credit-notes', creditNoteForm(account.id, { sourceId: 'CN-DUP' }));
    const res = await postCreditNote(creditNoteForm(account.id, { sourceId: 'CN-DUP' }));
    expect400(res, 'CN-DUP', 'app-invoicing.credit-note.duplicate-source-id');
  });

  it('when a credit note carries dueDate parts, then 400 naming them', async () => {
    expect400(await postCreditNote(creditNoteForm(account.id, { 'dueDate.year': '2026' })), 'dueDate.year');
  });

  it('when a credit note comes without a file, then it is accepted; with a non-PDF, then 400', async () => {
    expect((await postCreditNote(creditNoteForm(account.id, {}, null))).status).toBe(201);
    expect400(await postCreditNote(creditNoteForm(account.id, {}, Buffer.from('GIF89a'))), 'file');
  });

  it('when a multipart create is replayed with the same key under another boundary, then the stored response comes back', async () => {
    const key = randomUUID();
    const fields = { number: 'IDEM-1', sourceId: 'idem-1' };
    const first = await sandbox.call('POST', '/invoices', {
      body: documentForm(account.id, fields),
      headers: { 'Idempotency-Key': key },
    });
    // A FormData body gets a fresh random boundary on every request.
    const second = await sandbox.call('POST', '/invoices', {
      body: documentForm(account.id, fields),
      headers: { 'Idempotency-Key': key },
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replay')).toBe('true');
    expect(second.body).toEqual(first.body);
    const found = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: 'sourceId:is:idem-1' },
    });
    expect(found.body.nodes).toHaveLength(1);
  });

  it('when the same key comes with other file bytes, then 422', async () => {
    const key = randomUUID();
    const fields = { number: 'IDEM-2' };
    await sandbox.call('POST', '/invoices', {
      body: documentForm(account.id, fields),
      headers: { 'Idempotency-Key': key },
    });
    const other = Buffer.concat([PDF_BYTES, Buffer.from('% changed\n')]);
    const res = await sandbox.call('POST', '/invoices', {
      body: documentForm(account.id, fields, other),
      headers: { 'Idempotency-Key': key },
    });
    expect(res.status).toBe(422);
  });
});
