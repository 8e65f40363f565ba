import { describe, expect, it } from 'vitest';
import { planRepairs } from '../../../src/reconcile/repair-plan.js';
import type { DriftItem } from '../../../src/reconcile/types.js';

const item = (over: Partial<DriftItem> & Pick<DriftItem, 'category'>): DriftItem => ({
  kind: 'account',
  sourceKey: 'K',
  apiId: 'a1',
  ...over,
});

describe('planRepairs', () => {
  it('when records are missing, unresolved or changed and stored, then they are replayed', () => {
    const items = [
      item({ category: 'missing', sourceKey: 'M' }),
      item({ category: 'unresolved', sourceKey: 'U', foundId: 'b' }),
      item({
        category: 'changed',
        sourceKey: 'C',
        fields: [{ field: 'fullName', expected: 'a', actual: 'b' }],
      }),
    ];
    const plan = planRepairs({
      items,
      deleteOrphans: false,
      replayable: new Set(['account:M', 'account:U', 'account:C']),
    });
    expect(plan.replay.map((i) => i.sourceKey)).toEqual(['M', 'U', 'C']);
    expect(plan.fail).toEqual([]);
  });

  it('when a missing record was never stored, then it is recorded as a failure saying to re-sync', () => {
    const plan = planRepairs({
      items: [item({ category: 'missing' })],
      deleteOrphans: false,
      replayable: new Set(),
    });
    expect(plan.replay).toEqual([]);
    expect(plan.fail[0]!.reason).toContain('sync the source again');
  });

  it('when a read-only record or a frozen field differs, then a failure names the reason, and the mutable part is still replayed', () => {
    const frozenAndPaid = item({
      category: 'changed',
      kind: 'invoice',
      sourceKey: 'I',
      fields: [
        { field: 'totalAmount', expected: '1', actual: '2', frozen: true },
        { field: 'paidAmount', expected: '0', actual: '1' },
      ],
    });
    const plan = planRepairs({
      items: [item({ category: 'readOnly', reason: 'read-only: Pennylane' }), frozenAndPaid],
      deleteOrphans: false,
      replayable: new Set(['invoice:I', 'account:K']),
    });
    expect(plan.fail.map((f) => f.reason)).toEqual([
      'readOnly account K (a1): read-only: Pennylane; no write can change it',
      'changed invoice I (a1): totalAmount changed on the service; frozen at creation, the API cannot set it back',
    ]);
    expect(plan.replay.map((i) => i.sourceKey)).toEqual(['I']);
  });

  it('when an orphan is claimed by a stored row, then it is adopted; else unlinked only with deleteOrphans; documents never', () => {
    const orphans = [
      item({ category: 'orphan', sourceKey: 'CLAIMED', apiId: undefined, foundId: 'o1' }),
      item({ category: 'orphan', sourceKey: 'STRAY', apiId: undefined, foundId: 'o2' }),
      item({ category: 'orphan', kind: 'invoice', sourceKey: 'DOC', apiId: undefined, foundId: 'd1' }),
    ];
    const kept = planRepairs({
      items: orphans,
      deleteOrphans: false,
      replayable: new Set(['account:CLAIMED']),
    });
    expect(kept.replay.map((i) => i.sourceKey)).toEqual(['CLAIMED']);
    expect(kept.unlink).toEqual([]);
    expect(kept.fail.map((f) => f.item.sourceKey)).toEqual(['STRAY', 'DOC']);
    expect(kept.fail[0]!.reason).toContain('reconcile.deleteOrphans');

    const removed = planRepairs({
      items: orphans,
      deleteOrphans: true,
      replayable: new Set(['account:CLAIMED']),
    });
    expect(removed.unlink.map((i) => i.sourceKey)).toEqual(['STRAY']);
    expect(removed.fail.map((f) => f.item.sourceKey)).toEqual(['DOC']);
    expect(removed.fail[0]!.reason).toContain('cannot delete documents');
  });
});
