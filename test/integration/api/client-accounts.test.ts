import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import {
  accountFilters,
  accountTaskFilters,
  communicationFilters,
  creditNoteFilters,
  invoiceFilters,
} from '../../../src/api/filters.js';
import { collect } from '../../../src/api/pagination.js';
import type { Account } from '../../../src/api/types.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { address, clientFor, invoiceInput, pdf } from './client-support.js';

describe('typed client: accounts, documents, balances, communications and tasks', () => {
  let sandbox: TestSandbox;
  let harness: ReturnType<typeof clientFor>;
  let orgId: string;
  let linked: Account;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    harness = clientFor(sandbox);
    orgId = sandbox.organizationId;
    linked = await harness.client.accounts.create({
      organizationId: orgId,
      fullName: 'Linked Customer; Ltd',
      currencyCode: 'EUR',
      billingAddress: address,
      source: { connectionId: 'erp-csv', sourceId: 'CUST-1' },
    });
  });
  afterAll(() => sandbox.close());

  it('when an account is created with a source, then it is linked as Custom in the same request', () => {
    expect(linked.source).toMatchObject({
      connectionId: 'erp-csv',
      sourceId: 'CUST-1',
      connectorType: 'Custom',
    });
    expect(linked.readOnlyReason).toBeNull();
  });

  it('when a source is linked, touched and unlinked, then the account follows the spec transitions', async () => {
    const plain = await harness.client.accounts.create({
      organizationId: orgId,
      fullName: 'Plain Customer',
      currencyCode: 'EUR',
      billingAddress: address,
    });
    const withSource = await harness.client.accounts.linkSource(plain.id, {
      connectionId: 'erp-csv',
      sourceId: 'CUST-2',
    });
    expect(withSource.source?.connectorType).toBe('Custom');
    const touched = await harness.client.accounts.touchSource(plain.id, {
      lastUpdate: '2026-01-02T03:04:05.000Z',
    });
    expect(touched.source?.lastUpdate).toBe('2026-01-02T03:04:05.000Z');
    await harness.client.accounts.unlinkSource(plain.id);
    const orphan = await harness.client.accounts.get(plain.id);
    expect(orphan).toMatchObject({ source: null, lastUnlinkedSource: { sourceId: 'CUST-2' } });
    const notLinked = await harness.client.accounts.touchSource(plain.id).catch((e) => e);
    expect(notLinked).toBeInstanceOf(ApiResponseError);
    expect([400, 404]).toContain(notLinked.status);
    await harness.client.accounts.delete(plain.id);
    expect(await harness.client.accounts.get(plain.id).catch((e) => e.status)).toBe(404);
  });

  it('when accounts are updated, tagged and listed with filters, then the filters reach the API intact', async () => {
    await harness.client.accounts.update(linked.id, {
      fullName: 'Linked Customer; Ltd',
      currencyCode: 'EUR',
    });
    const tag = await harness.client.organizations.createTag(orgId, { name: 'Priority' });
    await harness.client.accounts.attachTags(linked.id, [tag.id]);
    const filters = accountFilters()
      .where('accountName', 'contains', 'customer; l')
      .where('tags', 'containsAny', ['Priority']);
    const found = await collect(
      harness.client.accounts.list({ organizationId: orgId, filters, sortBy: 'fullName' }),
    );
    expect(found.map((a) => a.id)).toEqual([linked.id]);
    await harness.client.accounts.detachTag(linked.id, tag.id);
    const none = await harness.client.accounts.listPage({ organizationId: orgId, filters, first: 10 });
    expect(none.nodes).toEqual([]);
    const bySource = await collect(
      harness.client.accounts.list({
        organizationId: orgId,
        filters: accountFilters().where('source', 'is', 'CUST-1'),
      }),
    );
    expect(bySource.map((a) => a.id)).toEqual([linked.id]);
  });

  it('when an invoice is created as multipart, then its fields, channel and sourceId are kept', async () => {
    const invoice = await harness.client.invoices.create(invoiceInput(linked.id, 1, 'doc-1'));
    expect(invoice).toMatchObject({
      accountId: linked.id,
      number: 'INV-1',
      sourceId: 'doc-1',
      channel: 'PublicApi',
      totalAmount: '120.00',
      issuedDate: { year: 2026, month: 1, day: 10 },
    });
    const sent = harness.sent.at(-1)!;
    expect(sent.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=receivables-sync-/);
    expect(await harness.client.invoices.get(invoice.id)).toMatchObject({ id: invoice.id });
  });

  it('when a sourceId is reused, then the duplicate answer keeps the API code and is not retried', async () => {
    const before = harness.sent.length;
    const error = await harness.client.invoices.create(invoiceInput(linked.id, 2, 'doc-1')).catch((e) => e);
    expect(error).toBeInstanceOf(ApiResponseError);
    expect(error).toMatchObject({
      status: 400,
      apiCode: 'app-invoicing.invoice.duplicate-source-id',
      retryable: false,
    });
    expect(harness.sent.length - before).toBe(1);
    const found = await harness.client.invoices.findBySourceIds(orgId, ['doc-1', 'missing']);
    expect([...found.keys()]).toEqual(['doc-1']);
  });

  it('when the paid amount is patched, then the remaining balance follows', async () => {
    const invoice = (await harness.client.invoices.findBySourceIds(orgId, ['doc-1'])).get('doc-1')!;
    const patched = await harness.client.invoices.patch(invoice.id, {
      paidAmount: '20.00',
      dueDate: { year: 2026, month: 3, day: 1 },
    });
    expect(patched).toMatchObject({
      paidAmount: '20.00',
      remainingBalance: '100.00',
      dueDate: { year: 2026, month: 3, day: 1 },
    });
    const listed = await collect(
      harness.client.invoices.list({
        organizationId: orgId,
        filters: invoiceFilters()
          .where('remainingBalance', 'equals', '100.00')
          .where('dueDate', 'on', '2026-03-01'),
      }),
    );
    expect(listed.map((i) => i.id)).toEqual([invoice.id]);
  });

  it('when a document is upserted by sourceId, then it is created once and then updated', async () => {
    const created = await harness.client.invoices.upsertBySourceId('doc-up', invoiceInput(linked.id, 'UP'));
    const updated = await harness.client.invoices.upsertBySourceId('doc-up', {
      ...invoiceInput(linked.id, 'UP'),
      totalAmount: '150.00',
    });
    expect(updated).toMatchObject({ id: created.id, totalAmount: '150.00', sourceId: 'doc-up' });
  });

  it('when a credit note is created, listed and patched, then it behaves like an invoice without due date', async () => {
    const note = await harness.client.creditNotes.create({
      accountId: linked.id,
      number: 'CN-1',
      issuedDate: { year: 2026, month: 1, day: 15 },
      totalAmount: '30.00',
      taxAmount: '5.00',
      billingAddress: address,
      file: pdf('CN-1'),
      sourceId: 'cn-1',
    });
    expect(note).toMatchObject({ number: 'CN-1', sourceId: 'cn-1', remainingAmount: '30.00' });
    const listed = await collect(
      harness.client.creditNotes.list({
        organizationId: orgId,
        filters: creditNoteFilters().where('sourceId', 'is', 'cn-1'),
      }),
    );
    expect(listed.map((n) => n.id)).toEqual([note.id]);
    const patched = await harness.client.creditNotes.patch(note.id, { paidAmount: '10.00' });
    expect(patched.remainingAmount).toBe('20.00');
  });

  it('when balances are read, then the aging, per-account rows and outstanding balances answer', async () => {
    const aging = await harness.client.balances.aging(orgId);
    expect(aging).toMatchObject({ organizationId: orgId });
    const rows = await collect(harness.client.balances.agingAccounts({ organizationId: orgId }));
    expect(rows.map((r) => r.accountId)).toContain(linked.id);
    const outstanding = await collect(harness.client.balances.outstanding({ organizationId: orgId }));
    expect(outstanding.map((r) => r.accountId)).toContain(linked.id);
    expect(await harness.client.accounts.financialOverview(linked.id)).toEqual(expect.any(Object));
    expect(await harness.client.accounts.dunning(linked.id)).toMatchObject({
      collectionStatus: expect.any(String),
    });
  });

  it('when communications and tasks exist, then their lists are read through filters', async () => {
    await sandbox.admin('POST', '/communications', {
      accountId: linked.id,
      direction: 'Incoming',
      subject: 'Hello',
    });
    await sandbox.admin('POST', '/tasks', { accountId: linked.id, title: 'Call back' });
    const incoming = await collect(
      harness.client.communications.list({
        organizationId: orgId,
        filters: communicationFilters().where('direction', 'is', 'Incoming'),
        sortBy: 'communicationAt',
        sortOrder: 'desc',
      }),
    );
    expect(incoming).toEqual([expect.objectContaining({ accountId: linked.id, accountDeletedAt: null })]);
    const channel = await collect(
      harness.client.communications.channel('incoming-emails', { organizationId: orgId }),
    );
    expect(channel).toEqual([expect.objectContaining({ accountDeleted: false })]);
    const scoped = await harness.client.communications.accountChannelPage(
      linked.id,
      'incoming-email-communications',
    );
    expect(scoped.nodes).toHaveLength(1);
    const tasks = await collect(
      harness.client.tasks.search({
        organizationId: orgId,
        filters: accountTaskFilters().where('title', 'startsWith', 'call'),
      }),
    );
    expect(tasks).toEqual([expect.objectContaining({ title: 'Call back' })]);
  });
});
