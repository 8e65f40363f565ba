import { describe, expect, it } from 'vitest';
import { FirstSeenIndex } from '../../../src/sources/csv/first-seen-index.js';

describe('FirstSeenIndex', () => {
  it('when a key comes back, then it gives the line it was first seen on and keeps it', () => {
    const index = new FirstSeenIndex();
    expect(index.firstSeen('INV-1', 2)).toBeUndefined();
    expect(index.firstSeen('INV-2', 3)).toBeUndefined();
    expect(index.firstSeen('INV-1', 9)).toBe(2);
    expect(index.firstSeen('INV-1', 12)).toBe(2);
    expect(index.size).toBe(2);
  });

  it('when keys differ only by case, accents or length, then they are different keys', () => {
    const index = new FirstSeenIndex();
    for (const [i, key] of ['a', 'A', 'é', 'e\u0301', 'ab', 'a ', '', '日本'].entries()) {
      expect(index.firstSeen(key, i + 1), JSON.stringify(key)).toBeUndefined();
    }
    expect(index.firstSeen('日本', 99)).toBe(8);
  });

  it('when it grows past many rehashes, then it agrees with a Map on every key', () => {
    const index = new FirstSeenIndex();
    const reference = new Map<string, number>();
    const got: Array<number | undefined> = [];
    const expected: Array<number | undefined> = [];
    for (let i = 0; i < 60_000; i++) {
      const key = `INV-${(i * 7919) % 40_000}${i % 3 === 0 ? '-x'.repeat(i % 50) : ''}`;
      got.push(index.firstSeen(key, i + 2));
      expected.push(reference.get(key));
      if (!reference.has(key)) reference.set(key, i + 2);
    }
    expect(got).toEqual(expected);
    expect(index.size).toBe(reference.size);
  });

  it('when a key is very long, then it is stored and found again', () => {
    const index = new FirstSeenIndex();
    const long = 'x'.repeat(100_000);
    expect(index.firstSeen(long, 2)).toBeUndefined();
    expect(index.firstSeen(long, 3)).toBe(2);
    expect(index.firstSeen(`${long}y`, 4)).toBeUndefined();
  });
});
