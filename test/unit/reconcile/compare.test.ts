import { describe, expect, it } from 'vitest';
import {
  accountsToCheck,
  compareAccounts,
  compareDocuments,
  countDrift,
  driftOf,
} from '../../../src/reconcile/compare.js';
import type { MapEntry, ServiceAccount, ServiceDocument } from '../../../src/reconcile/types.js';

const ADDRESS = { street: '1 rue A', city: 'Paris', postalCode: '75001', country: 'FR' };

const accountEntry = (key: string, apiId: string, fullName = `Name ${key}`): MapEntry => ({
  kind: 'account',
  sourceKey: key,
  apiId,
  syncedState: { fullName, tags: [] },
  record: {
    kind: 'account',
    sourceId: key,
    fullName,
    currencyCode: 'EUR',
    billingAddress: ADDRESS,
    tags: [],
  },
});

const account = (id: string, key: string, over: Partial<ServiceAccount> = {}): ServiceAccount => ({
  id,
  fullName: `Name ${key}`,
  currencyCode: 'EUR',
  billingAddress: ADDRESS,
  source: { connectionId: 'erp', sourceId: key, connectorType: 'Custom' },
  readOnlyReason: null,
  ...over,
});

const invoiceEntry = (key: string, apiId: string, paidAmount = '0.00'): MapEntry => ({
  kind: 'invoice',
  sourceKey: key,
  apiId,
  syncedState: { frozen: 'x', paidAmount, dueDate: { year: 2026, month: 2, day: 1 } },
  record: {
    kind: 'invoice',
    sourceId: key,
    accountSourceId: 'C1',
    number: `N-${key}`,
    issuedDate: { year: 2026, month: 1, day: 1 },
    dueDate: { year: 2026, month: 2, day: 1 },
    totalAmount: '120',
    taxAmount: '20',
    paidAmount,
  },
});

const invoice = (id: string, key: string | null, over: Partial<ServiceDocument> = {}): ServiceDocument => ({
  id,
  sourceId: key,
  accountId: 'acc-1',
  number: `N-${key}`,
  issuedDate: { year: 2026, month: 1, day: 1 },
  dueDate: { year: 2026, month: 2, day: 1 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  paidAmount: '0.00',
  readOnlyReason: null,
  ...over,
});

describe('compareAccounts', () => {
  it('when the service holds every account as written, then there is no drift', () => {
    const entries = [accountEntry('C1', 'a1'), accountEntry('C2', 'a2')];
    const listed = [account('a1', 'C1'), account('a2', 'C2')];
    expect(accountsToCheck(entries, listed)).toEqual([]);
    expect(compareAccounts({ connectionId: 'erp', entries, listed, checked: new Map() })).toEqual([]);
  });

  it('when an account is gone (404) and nothing carries its source id, then it is missing', () => {
    const entries = [accountEntry('C1', 'a1')];
    expect(accountsToCheck(entries, [])).toEqual(['a1']);
    const items = compareAccounts({
      connectionId: 'erp',
      entries,
      listed: [],
      checked: new Map([['a1', null]]),
    });
    expect(items).toEqual([{ category: 'missing', kind: 'account', sourceKey: 'C1', apiId: 'a1' }]);
  });

  it('when its id is gone but the connection holds its source id under another id, then it is unresolved, not an orphan', () => {
    const items = compareAccounts({
      connectionId: 'erp',
      entries: [accountEntry('C1', 'a1')],
      listed: [account('b1', 'C1')],
      checked: new Map([['a1', null]]),
    });
    expect(items).toEqual([
      { category: 'unresolved', kind: 'account', sourceKey: 'C1', apiId: 'a1', foundId: 'b1' },
    ]);
  });

  it('when the name and city differ, then it is changed with both fields named', () => {
    const items = compareAccounts({
      connectionId: 'erp',
      entries: [accountEntry('C1', 'a1')],
      listed: [account('a1', 'C1', { fullName: 'Renamed', billingAddress: { ...ADDRESS, city: 'Lyon' } })],
      checked: new Map(),
    });
    expect(items).toHaveLength(1);
    expect(items[0]!.category).toBe('changed');
    expect(items[0]!.fields).toEqual([
      { field: 'fullName', expected: 'Name C1', actual: 'Renamed' },
      { field: 'billingAddress.city', expected: 'Paris', actual: 'Lyon' },
    ]);
  });

  it('when an account is linked to a connector, then it is read-only with the connector named, even if renamed', () => {
    const items = compareAccounts({
      connectionId: 'erp',
      entries: [accountEntry('C1', 'a1')],
      listed: [
        account('a1', 'C1', {
          fullName: 'Other',
          source: { connectionId: 'pl-1', sourceId: 'X', connectorType: 'Pennylane' },
          readOnlyReason: 'Pennylane',
        }),
      ],
      checked: new Map(),
    });
    expect(items[0]).toMatchObject({
      category: 'readOnly',
      reason: 'linked to another source: Pennylane pl-1/X',
    });
  });

  it('when an account was unlinked on the service, then it is read-only (unlinked); one a tombstone unlinked is not drift', () => {
    const unlinked = { ...accountEntry('C2', 'a2'), syncedState: { unlinked: true } };
    const entries = [accountEntry('C1', 'a1'), unlinked];
    expect(accountsToCheck(entries, [])).toEqual(['a1']);
    const items = compareAccounts({
      connectionId: 'erp',
      entries,
      listed: [],
      checked: new Map([['a1', account('a1', 'C1', { source: null })]]),
    });
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ category: 'readOnly', sourceKey: 'C1' });
    expect(items[0]!.reason).toContain('unlinked on the service');
  });

  it('when the connection holds an account the map does not know, then it is an orphan; other connections are ignored', () => {
    const items = compareAccounts({
      connectionId: 'erp',
      entries: [],
      listed: [
        account('o1', 'LOST'),
        account('x1', 'THEIRS', {
          source: { connectionId: 'other', sourceId: 'THEIRS', connectorType: 'Custom' },
        }),
      ],
      checked: new Map(),
    });
    expect(items).toEqual([{ category: 'orphan', kind: 'account', sourceKey: 'LOST', foundId: 'o1' }]);
  });
});

describe('compareDocuments', () => {
  const props = (entries: MapEntry[], listed: ServiceDocument[]) => ({
    kind: 'invoice' as const,
    entries,
    listed,
    ourAccountIds: new Set(['acc-1']),
  });

  it('when amounts are equal as decimals (120 and 120.00), then there is no drift', () => {
    expect(compareDocuments(props([invoiceEntry('I1', 'd1')], [invoice('d1', 'I1')]))).toEqual([]);
  });

  it('when the paid amount was edited, then it is changed (not frozen)', () => {
    const items = compareDocuments(
      props([invoiceEntry('I1', 'd1')], [invoice('d1', 'I1', { paidAmount: '40.00' })]),
    );
    expect(items).toEqual([
      {
        category: 'changed',
        kind: 'invoice',
        sourceKey: 'I1',
        apiId: 'd1',
        fields: [{ field: 'paidAmount', expected: '0.00', actual: '40.00' }],
      },
    ]);
  });

  it('when the total differs, then the field is marked frozen', () => {
    const items = compareDocuments(
      props([invoiceEntry('I1', 'd1')], [invoice('d1', 'I1', { totalAmount: '99.00' })]),
    );
    expect(items[0]!.fields).toEqual([
      { field: 'totalAmount', expected: '120', actual: '99.00', frozen: true },
    ]);
  });

  it('when a document is gone, then it is missing; under another id, unresolved', () => {
    const items = compareDocuments(
      props([invoiceEntry('I1', 'd1'), invoiceEntry('I2', 'd2')], [invoice('e2', 'I2')]),
    );
    expect(items.map((i) => [i.category, i.sourceKey, i.foundId])).toEqual([
      ['missing', 'I1', undefined],
      ['unresolved', 'I2', 'e2'],
    ]);
  });

  it('when an unknown document sits on one of our accounts, then it is an orphan; on another account, it is not ours', () => {
    const items = compareDocuments(
      props([], [invoice('d9', 'STRAY'), invoice('d8', 'ELSEWHERE', { accountId: 'acc-other' })]),
    );
    expect(items).toEqual([{ category: 'orphan', kind: 'invoice', sourceKey: 'STRAY', foundId: 'd9' }]);
  });
});

describe('countDrift and driftOf', () => {
  it('when items are counted, then every category and kind is present, and acknowledged ones are not drift', () => {
    const items = [
      { category: 'missing' as const, kind: 'account' as const, sourceKey: 'A' },
      { category: 'readOnly' as const, kind: 'account' as const, sourceKey: 'B', acknowledged: true },
    ];
    const counts = countDrift(items);
    expect(counts.missing).toEqual({ account: 1, invoice: 0, creditNote: 0 });
    expect(counts.readOnly.account).toBe(1);
    expect(counts.orphan.creditNote).toBe(0);
    expect(driftOf(items).map((i) => i.sourceKey)).toEqual(['A']);
  });
});
