import { describe, expect, it } from 'vitest';
import { FirstSeenIndex } from '../../../src/sources/csv/first-seen-index.js';

/** Records `count` keys (every 7th one a repeat) and says whether the index agreed with a Map. */
function agreesWithMap(index: FirstSeenIndex, count: number): boolean {
  const reference = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const key = i % 7 === 6 ? `ID-${i - 3}` : `ID-${i}${i % 11 === 0 ? '-é' : ''}`;
    const expected = reference.get(key);
    if (index.firstSeen(key, i + 2) !== expected) return false;
    if (expected === undefined) reference.set(key, i + 2);
  }
  return index.size === reference.size && [...reference.keys()].every((key) => index.has(key));
}

describe('FirstSeenIndex sized for the keys expected', () => {
  it('when more keys come than expected, then it grows and still finds every one', () => {
    expect(agreesWithMap(new FirstSeenIndex(100), 20_000)).toBe(true);
  });

  it('when far fewer keys come than expected, then it finds every one and nothing else', () => {
    const index = new FirstSeenIndex(1_000_000);
    expect(agreesWithMap(index, 3_000)).toBe(true);
    expect(index.has('ID-999999')).toBe(false);
  });

  it('when the expected count is absurd (blank lines, a wrong estimate), then it is capped and still works', () => {
    expect(agreesWithMap(new FirstSeenIndex(Number.MAX_SAFE_INTEGER), 1_000)).toBe(true);
    expect(agreesWithMap(new FirstSeenIndex(-5), 1_000)).toBe(true);
  });
});
