import { describe, expect, it } from 'vitest';
import { hidingRecords } from '../../../src/reconcile/hidden-records.js';
import { FakeState } from '../sync/fakes.js';

const saved = (sourceKey: string, apiId: string) => ({
  sourceKey,
  apiId,
  contentHash: `h-${sourceKey}`,
  syncedState: {},
});

describe('hidingRecords', () => {
  async function stateWith() {
    const state = new FakeState();
    await state.recordMap.save('s', 'account', saved('A', 'a1'), null);
    await state.recordMap.save('s', 'account', saved('B', 'b1'), null);
    return state;
  }

  it('when a record is hidden, then the engine sees it as unknown even with its own fingerprint, and others as they are', async () => {
    const hidden = hidingRecords(await stateWith(), 's', [['account', 'A']]);
    const diff = await hidden.recordMap.diff(
      's',
      'account',
      new Map([
        ['A', 'h-A'],
        ['B', 'h-B'],
      ]),
    );
    expect([...diff.unknown]).toEqual(['A']);
    expect(diff.changed.size).toBe(0);
    expect([...(await hidden.recordMap.getMany('s', 'account', ['A', 'B'])).keys()]).toEqual(['B']);
    expect(await hidden.recordMap.fingerprints('s', 'account', 100)).toBeNull();
  });

  it('when the engine saves a hidden record again, then it is shown with its new API id; the real map was never emptied', async () => {
    const state = await stateWith();
    const hidden = hidingRecords(state, 's', [['account', 'A']]);
    expect((await state.recordMap.getMany('s', 'account', ['A'])).get('A')?.apiId).toBe('a1');
    await hidden.recordMap.save('s', 'account', saved('A', 'a2'), null);
    expect((await hidden.recordMap.getMany('s', 'account', ['A'])).get('A')?.apiId).toBe('a2');
  });

  it('when another source has the same key, then it is not hidden', async () => {
    const state = await stateWith();
    await state.recordMap.save('t', 'account', saved('A', 'x1'), null);
    const hidden = hidingRecords(state, 's', [['account', 'A']]);
    expect((await hidden.recordMap.getMany('t', 'account', ['A'])).get('A')?.apiId).toBe('x1');
  });
});
