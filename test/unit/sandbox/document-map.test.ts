import { describe, expect, it } from 'vitest';
import { DocumentMap } from '../../../src/sandbox/document-map.js';
import type { DocumentRecord } from '../../../src/sandbox/model.js';

const doc = (id: string, over: Partial<DocumentRecord> = {}): DocumentRecord => ({
  id,
  kind: 'invoice',
  organizationId: 'org-1',
  accountId: 'acc-1',
  number: `F-${id}`,
  issuedDate: { year: 2026, month: 1, day: 10 },
  dueDate: { year: 2026, month: 2, day: 9 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  paidAmount: '0.00',
  billingAddress: { street: '1 quai', city: 'Nantes', postalCode: '44000', country: 'FR' },
  file: null,
  sourceId: `S-${id}`,
  channel: 'PublicApi',
  connectionId: null,
  readOnlyReason: null,
  paymentMethod: null,
  paymentSchedule: false,
  tagIds: [],
  createdAt: '2026-01-10T09:00:00Z',
  updatedAt: '2026-01-10T09:00:00Z',
  ...over,
});

/** What a scan of every document finds, as the sandbox's rules did before the indexes. */
const scanBySourceId = (map: DocumentMap, d: Pick<DocumentRecord, 'kind' | 'organizationId' | 'sourceId'>) =>
  [...map.values()].find(
    (other) =>
      other.kind === d.kind && other.organizationId === d.organizationId && other.sourceId === d.sourceId,
  );
const scanOfAccount = (map: DocumentMap, accountId: string) =>
  [...map.values()].filter((other) => other.accountId === accountId);

describe('the sandbox documents, indexed by sourceId and account', () => {
  it('when documents are stored, replaced and deleted, then the lookups find what a scan of them all finds', () => {
    const map = new DocumentMap();
    map.set('1', doc('1'));
    map.set('2', doc('2', { accountId: 'acc-2' }));
    map.set('3', doc('3', { kind: 'creditNote', sourceId: 'S-1', dueDate: null }));
    map.set('4', doc('4', { organizationId: 'org-2', sourceId: 'S-1' }));
    map.set('5', doc('5', { sourceId: null }));
    // The same document again (a PATCH's new amounts): it keeps its place.
    map.set('1', { ...doc('1'), paidAmount: '10.00' });

    for (const probe of [
      doc('1'),
      doc('3', { kind: 'creditNote', sourceId: 'S-1' }),
      doc('4', { organizationId: 'org-2', sourceId: 'S-1' }),
    ])
      expect(map.bySourceId(probe.kind, probe.organizationId, probe.sourceId!)).toBe(
        scanBySourceId(map, probe),
      );
    expect(map.bySourceId('invoice', 'org-1', 'S-1')?.paidAmount).toBe('10.00');
    expect(map.bySourceId('invoice', 'org-1', 'S-404')).toBeUndefined();
    expect(map.ofAccount('acc-1').map((d) => d.id)).toEqual(['1', '3', '4', '5']);
    expect(map.ofAccount('acc-1')).toEqual(scanOfAccount(map, 'acc-1'));

    map.delete('1');
    map.delete('2');
    expect(map.bySourceId('invoice', 'org-1', 'S-1')).toBeUndefined();
    expect(map.ofAccount('acc-2')).toEqual([]);
    expect(map.ofAccount('acc-1').map((d) => d.id)).toEqual(['3', '4', '5']);
    map.clear();
    expect(map.bySourceId('creditNote', 'org-1', 'S-1')).toBeUndefined();
    expect(map.ofAccount('acc-1')).toEqual([]);
  });

  it('when two documents carry the same sourceId (seeded by the admin route), then the first stored is found until it is deleted', () => {
    const map = new DocumentMap();
    map.set('a', doc('a', { sourceId: 'S-X' }));
    map.set('b', doc('b', { sourceId: 'S-X' }));
    expect(map.bySourceId('invoice', 'org-1', 'S-X')?.id).toBe('a');
    map.delete('a');
    expect(map.bySourceId('invoice', 'org-1', 'S-X')?.id).toBe('b');
  });
});
