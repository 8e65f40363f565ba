import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { PREDEFINED_TAGS } from '../../../src/sandbox/store.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { createAccount, createDocument, creditNoteForm, documentForm } from './accounts-documents-support.js';

const VIP = PREDEFINED_TAGS[0]!;
const issued = (month: string, day: string) => ({ 'issuedDate.month': month, 'issuedDate.day': day });
const due = (month: string, day: string) => ({ 'dueDate.month': month, 'dueDate.day': day });

/**
 * A dedicated organization at 2026-03-02. Invoices, by issue date:
 * A1 (Acme, 100, due 02-14, sourceId abc-1) Overdue; A2 (Acme, 300, due 04-01, sourceId ABC-1) Issued;
 * A3 (Acme, 50, paid) Paid; B1 (Bolt, seeded by a connector: channel Api, VIP, schedule, Card, read-only).
 * Credit notes: CN-1 (40, issued 01-10, cn-1) Unallocated; CN-2 (60, issued 02-20, 20 allocated) PartiallyAllocated.
 */
describe('GET /invoices and GET /credit-notes', () => {
  const clock = new ManualClock('2026-03-02T09:00:00.000Z');
  let sandbox: TestSandbox;
  let org: string;
  let a1: any;
  let cn1: any;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ clock });
    org = (await sandbox.admin('POST', '/organizations', { memberUserIds: [sandbox.seeded.user.id] })).id;
    const acme = await createAccount(sandbox, 'Acme', { organizationId: org });
    const invoice = (fields: Record<string, string>) =>
      createDocument(sandbox, '/invoices', documentForm(acme.id, fields));
    a1 = await invoice({
      number: 'A1',
      sourceId: 'abc-1',
      totalAmount: '100.00',
      ...issued('1', '15'),
      ...due('2', '14'),
    });
    await invoice({
      number: 'A2',
      sourceId: 'ABC-1',
      totalAmount: '300.00',
      ...issued('2', '01'),
      ...due('4', '1'),
    });
    const a3 = await invoice({ number: 'A3', totalAmount: '50.00', taxAmount: '0', ...issued('2', '10') });
    await sandbox.call('PATCH', `/invoices/${a3.id}`, { body: { paidAmount: '50' } });
    const bolt = await sandbox.admin('POST', '/accounts', { organizationId: org, fullName: 'Bolt' });
    await sandbox.admin('POST', '/documents', {
      accountId: bolt.id,
      number: 'B1',
      issuedDate: { year: 2026, month: 2, day: 20 },
      dueDate: { year: 2026, month: 3, day: 2 },
      channel: 'Api',
      tagIds: [VIP.id],
      paymentSchedule: true,
      paymentMethod: 'Card',
      readOnlyReason: 'Pennylane',
      connectionId: 'pl-1',
    });
    const note = (fields: Record<string, string>) =>
      createDocument(sandbox, '/credit-notes', creditNoteForm(acme.id, fields));
    cn1 = await note({
      number: 'CN-1',
      sourceId: 'cn-1',
      totalAmount: '40.00',
      taxAmount: '0',
      ...issued('1', '10'),
    });
    const cn2 = await note({ number: 'CN-2', totalAmount: '60.00', taxAmount: '0', ...issued('2', '20') });
    await sandbox.call('PATCH', `/credit-notes/${cn2.id}`, { body: { paidAmount: '20.00' } });
  });
  afterAll(() => sandbox.close());

  const list = (path: string, query: Record<string, string | number | undefined> = {}) =>
    sandbox.call('GET', path, { query: { organizationId: org, ...query } });
  const numbers = async (path: string, filters: string) => {
    const res = await list(path, { filters });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.nodes.map((d: any) => d.number);
  };
  const invoices = (filters: string) => numbers('/invoices', filters);
  const creditNotes = (filters: string) => numbers('/credit-notes', filters);

  it('when organizationId is missing or not a uuid, then 400; when unknown, then 404', async () => {
    for (const path of ['/invoices', '/credit-notes']) {
      expect((await sandbox.call('GET', path)).status).toBe(400);
      expect((await sandbox.call('GET', path, { query: { organizationId: '123' } })).status).toBe(400);
      expect((await sandbox.call('GET', path, { query: { organizationId: randomUUID() } })).status).toBe(404);
    }
  });

  it('when the call is plain, then every document of the kind comes, oldest issue date first, with readOnlyReason', async () => {
    const res = await list('/invoices');
    expect(res.body.nodes.map((d: any) => d.number)).toEqual(['A1', 'A2', 'A3', 'B1']);
    expect(res.body.nodes.map((d: any) => d.readOnlyReason)).toEqual([null, null, null, 'Pennylane']);
    expect(res.body.nodes[3]).toMatchObject({ channel: 'Api', connectionId: 'pl-1' });
    expect((await list('/credit-notes')).body.nodes.map((d: any) => d.number)).toEqual(['CN-1', 'CN-2']);
  });

  it('when filtering sourceId:is, then the document is recovered, case-sensitively', async () => {
    const found = await list('/invoices', { filters: 'sourceId:is:abc-1' });
    expect(found.body.nodes).toHaveLength(1);
    expect(found.body.nodes[0]).toEqual(a1);
    expect(await invoices('sourceId:is:ABC-1')).toEqual(['A2']);
    expect(await invoices('sourceId:is:Abc-1')).toEqual([]);
    expect(await creditNotes('sourceId:is:cn-1')).toEqual(['CN-1']);
    expect((await list('/credit-notes', { filters: 'sourceId:is:cn-1' })).body.nodes[0]).toEqual(cn1);
  });

  it('when filtering sourceId:isAnyOf, isEmpty or isNotEmpty, then batches and absences work', async () => {
    expect(await invoices('sourceId:isAnyOf:abc-1,ABC-1,missing')).toEqual(['A1', 'A2']);
    expect(await invoices('sourceId:isEmpty')).toEqual(['A3', 'B1']);
    expect(await invoices('sourceId:isNotEmpty')).toEqual(['A1', 'A2']);
    expect(await creditNotes('sourceId:isEmpty')).toEqual(['CN-2']);
  });

  it.each([
    ['/invoices', 'sourceId:contains:abc'],
    ['/invoices', 'sourceId:equals:abc-1'],
    ['/invoices', 'sourceId:isNot:abc-1'],
    ['/credit-notes', 'sourceId:startsWith:cn'],
    ['/invoices', 'issuedDate:on:2026-01-15'],
    ['/credit-notes', 'dueDate:on:2026-01-15'],
    ['/credit-notes', 'remainingBalance:equals:0'],
    ['/invoices', 'remainingAmount:equals:0'],
    ['/invoices', 'status:is:Unallocated'],
    ['/invoices', 'dueDate:on:2026-02-30'],
    ['/invoices', 'accountName:is:Acme'],
  ])('when %s is filtered with %s, then 400 LIST_FILTER_INVALID', async (path, filters) => {
    const res = await list(path, { filters });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('LIST_FILTER_INVALID');
  });

  it('when filtering by number and accountName, then text matches ignore case', async () => {
    expect(await invoices('number:equals:a2')).toEqual(['A2']);
    expect(await invoices('number:isAnyOf:A1,A3')).toEqual(['A1', 'A3']);
    expect(await invoices('number:startsWith:b')).toEqual(['B1']);
    expect(await invoices('accountName:contains:CM')).toEqual(['A1', 'A2', 'A3']);
    expect(await creditNotes('number:contains:-2')).toEqual(['CN-2']);
  });

  it('when filtering invoices by status, then it is derived from due date and payments', async () => {
    expect(await invoices('status:is:Overdue')).toEqual(['A1']);
    expect(await invoices('status:is:Issued')).toEqual(['A2', 'B1']);
    expect(await invoices('status:is:Paid')).toEqual(['A3']);
    expect(await invoices('status:isNot:Paid')).toEqual(['A1', 'A2', 'B1']);
  });

  it('when filtering invoices by dueDate, then days compare whole', async () => {
    expect(await invoices('dueDate:on:2026-03-02')).toEqual(['B1']);
    expect(await invoices('dueDate:before:2026-03-02')).toEqual(['A1', 'A3']);
    expect(await invoices('dueDate:after:2026-03-02')).toEqual(['A2']);
    expect(await invoices('dueDate:between:2026-02-14,2026-03-02')).toEqual(['A1', 'A3', 'B1']);
  });

  it('when filtering by amounts, then decimals compare exactly', async () => {
    expect(await invoices('totalAmount:greaterThan:99.99')).toEqual(['A1', 'A2', 'B1']);
    expect(await invoices('remainingBalance:equals:0')).toEqual(['A3']);
    expect(await invoices('remainingBalance:between:100.01,300')).toEqual(['A2']);
    expect(await creditNotes('remainingAmount:equals:40')).toEqual(['CN-1', 'CN-2']);
    expect(await creditNotes('totalAmount:lessThan:50')).toEqual(['CN-1']);
  });

  it('when filtering by tags, paymentSchedule, paymentMethod and channel, then the seeded connector invoice matches', async () => {
    expect(await invoices(`tags:containsAny:${VIP.id}`)).toEqual(['B1']);
    expect(await invoices('tags:containsAll:VIP')).toEqual(['B1']);
    expect(await invoices('tags:isEmpty')).toEqual(['A1', 'A2', 'A3']);
    expect(await invoices('paymentSchedule:isTrue')).toEqual(['B1']);
    expect(await invoices('paymentMethod:is:card')).toEqual(['B1']);
    expect(await invoices('channel:is:PublicApi')).toEqual(['A1', 'A2', 'A3']);
    expect(await invoices('channel:isAnyOf:Api,Manual')).toEqual(['B1']);
    expect(await creditNotes('channel:isNot:PublicApi')).toEqual([]);
  });

  it('when filtering credit notes by status and issuedDate, then allocation and days apply', async () => {
    expect(await creditNotes('status:is:Unallocated')).toEqual(['CN-1']);
    expect(await creditNotes('status:is:PartiallyAllocated')).toEqual(['CN-2']);
    expect(await creditNotes('issuedDate:before:2026-02-01')).toEqual(['CN-1']);
    expect(await creditNotes('issuedDate:on:2026-02-20')).toEqual(['CN-2']);
  });

  it('when filtered without first, then pages hold 20 and the cursor is v2 bound to the filters', async () => {
    const page = await list('/invoices', { filters: 'status:isNot:Paid', first: 2 });
    expect(page.body.pageInfo.endCursor).toMatch(/^v2:/);
    const next = await list('/invoices', {
      filters: 'status:isNot:Paid',
      first: 2,
      after: page.body.pageInfo.endCursor,
    });
    expect(next.body.nodes.map((d: any) => d.number)).toEqual(['B1']);
    const wrong = await list('/credit-notes', {
      filters: 'status:isNot:Paid',
      after: page.body.pageInfo.endCursor,
    });
    expect(wrong.status).toBe(400);
  });

  it('when sortBy is given, then 400 (document lists are not sortable)', async () => {
    expect((await list('/invoices', { sortBy: 'number' })).status).toBe(400);
  });

  it('when a document id is unknown, of the other kind or of a hidden organization, then 404', async () => {
    expect((await sandbox.call('GET', `/invoices/${randomUUID()}`)).status).toBe(404);
    expect((await sandbox.call('GET', `/invoices/${cn1.id}`)).status).toBe(404);
    expect((await sandbox.call('GET', `/credit-notes/${a1.id}`)).status).toBe(404);
    const hiddenOrg = await sandbox.admin('POST', '/organizations', { memberUserIds: [] });
    const hidden = await sandbox.admin('POST', '/accounts', { organizationId: hiddenOrg.id });
    const doc = await sandbox.admin('POST', '/documents', { accountId: hidden.id });
    expect((await sandbox.call('GET', `/invoices/${doc.id}`)).status).toBe(404);
  });
});
