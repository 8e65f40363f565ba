import { describe, expect, it } from 'vitest';
import { FirstSeenIndex } from '../../../src/sources/csv/first-seen-index.js';

describe('FirstSeenIndex.has', () => {
  it('when asked about keys, then it says which were recorded, and records nothing itself', () => {
    const index = new FirstSeenIndex();
    index.firstSeen('ACC-1', 2);
    index.firstSeen('é', 3);
    expect([
      index.has('ACC-1'),
      index.has('é'),
      index.has('e\u0301'),
      index.has('acc-1'),
      index.has(''),
    ]).toEqual([true, true, false, false, false]);
    expect(index.size).toBe(2);
    // Asking did not record: the key is still new to `firstSeen`.
    expect(index.firstSeen('acc-1', 9)).toBeUndefined();
  });

  it('when the index grew past many rehashes, then it agrees with a Set on present and absent keys', () => {
    const index = new FirstSeenIndex();
    const reference = new Set<string>();
    for (let i = 0; i < 30_000; i++) {
      const key = `ACC-${(i * 7919) % 50_000}`;
      index.firstSeen(key, i + 2);
      reference.add(key);
    }
    const disagreements: string[] = [];
    for (let i = 0; i < 50_000; i++) {
      const key = `ACC-${i}`;
      if (index.has(key) !== reference.has(key)) disagreements.push(key);
    }
    expect(disagreements).toEqual([]);
    expect(index.size).toBe(reference.size);
  });
});
