import { describe, expect, it } from 'vitest';
import { FirstSeenIndex, hashString, tagOf } from '../../../src/sources/csv/first-seen-index.js';

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

  it('when ids share the 16 bits of hash a slot keeps (its tag), then each is still its own key', () => {
    // Two ids of the usual form whose hashes give the same tag and the same low 10 bits (the slot in
    // the smallest table, 1,024 slots): the second probes the first's slot and must be told apart
    // by the rest of its hash.
    const seen = new Map<number, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; pair === undefined; i++) {
      const key = `INV-${String(i).padStart(8, '0')}`;
      const hash = hashString(key);
      const where = tagOf(hash) * 1024 + (hash & 1023);
      const other = seen.get(where);
      if (other === undefined) seen.set(where, key);
      else pair = [other, key];
    }
    expect(hashString(pair[0])).not.toBe(hashString(pair[1]));
    const index = new FirstSeenIndex(16);
    expect(index.firstSeen(pair[0], 2)).toBeUndefined();
    expect(index.firstSeen(pair[1], 3)).toBeUndefined();
    expect(index.firstSeen(pair[1], 4)).toBe(3);
    expect(index.firstSeen(pair[0], 5)).toBe(2);
    expect(index.size).toBe(2);
  });

  it('when a key is very long, then it is stored and found again', () => {
    const index = new FirstSeenIndex();
    const long = 'x'.repeat(100_000);
    expect(index.firstSeen(long, 2)).toBeUndefined();
    expect(index.firstSeen(long, 3)).toBe(2);
    expect(index.firstSeen(`${long}y`, 4)).toBeUndefined();
  });
});
