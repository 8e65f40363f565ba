import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FailuresRepository } from '../../../src/state/failures.js';
import { KEPT_ITEMS, ReconciliationsRepository } from '../../../src/state/reconciliations.js';
import { RecordMapRepository } from '../../../src/state/record-map.js';
import { openTestState } from '../../support/postgres.js';

describe('ReconciliationsRepository (Postgres)', () => {
  let state: Awaited<ReturnType<typeof openTestState>>;
  let repo: ReconciliationsRepository;
  beforeAll(async () => {
    state = await openTestState('reconciliations');
    repo = new ReconciliationsRepository(state.db);
  });
  afterAll(async () => {
    await state.close(); // drops its schema too
  });

  const counts = { missing: { account: 2, invoice: 0, creditNote: 0 } };

  it('when reconciliations finish, then the latest of each source is read back with its counts, bounded items and cost', async () => {
    const first = await repo.start('erp', 'cli', false);
    await repo.finish(first, { counts, items: [], drift: 2, repairs: {}, requests: 3 });
    const second = await repo.start('erp', 'schedule', true);
    const items = Array.from({ length: KEPT_ITEMS + 5 }, (_, i) => ({
      category: 'missing',
      sourceKey: `C-${i}`,
    }));
    await repo.finish(second, { counts, items, drift: 0, repairs: { recreatedOrAdopted: 2 }, requests: 9 });
    const other = await repo.start('billing', 'cli', false);
    await repo.fail(other, 'cannot reach the API', 1);

    const latest = await repo.latest();
    expect(latest.map((r) => [r.sourceId, r.id, r.status])).toEqual([
      ['billing', other, 'failed'],
      ['erp', second, 'done'],
    ]);
    const erp = latest[1]!;
    expect(erp).toMatchObject({
      repair: true,
      trigger: 'schedule',
      drift: 0,
      requests: 9,
      itemsTotal: KEPT_ITEMS + 5,
    });
    expect(erp.counts).toEqual(counts);
    expect(erp.items).toHaveLength(KEPT_ITEMS);
    expect(erp.repairs).toEqual({ recreatedOrAdopted: 2 });
    expect(erp.finishedAt).toBeInstanceOf(Date);
    expect(latest[0]!.error).toBe('cannot reach the API');
    expect((await repo.recent('erp')).map((r) => r.id)).toEqual([second, first]);
    expect((await repo.get(first))?.drift).toBe(2);
  });

  it('when the record map and failures hold a source, then mapEntries and heldFailures read only what a reconciliation needs', async () => {
    const map = new RecordMapRepository(state.db);
    await map.save(
      'erp',
      'account',
      {
        sourceKey: 'C-1',
        apiId: 'a1',
        contentHash: 'h',
        syncedState: { fullName: 'A' },
        record: { kind: 'account' },
      },
      null,
    );
    await map.save(
      'other',
      'account',
      { sourceKey: 'C-9', apiId: 'z', contentHash: 'h', syncedState: {} },
      null,
    );
    expect(await repo.mapEntries('erp')).toEqual([
      {
        kind: 'account',
        sourceKey: 'C-1',
        apiId: 'a1',
        syncedState: { fullName: 'A' },
        record: { kind: 'account' },
      },
    ]);
    const failures = new FailuresRepository(state.db);
    await failures.record({
      sourceId: 'erp',
      kind: 'account',
      sourceKey: 'C-5',
      stage: 'reconcile',
      message: 'read-only',
      retryable: false,
    });
    await failures.record({
      sourceId: 'erp',
      kind: 'invoice',
      sourceKey: 'I-1',
      stage: 'create',
      message: 'refused',
      retryable: false,
    });
    expect(await repo.heldFailures('erp')).toEqual([{ kind: 'account', sourceKey: 'C-5' }]);
  });
});
