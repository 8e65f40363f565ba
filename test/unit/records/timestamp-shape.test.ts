import { describe, expect, it } from 'vitest';
import { hasTimestampShape } from '../../../src/records/field-validators.js';

/** The expression `hasTimestampShape` reads by hand, as the contract states it. */
const TIMESTAMP_RE =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

describe('hasTimestampShape', () => {
  it('when a value is a timestamp, a near miss or noise, then it agrees with the contract expression', () => {
    const seeds = [
      '2026-01-15',
      '2026-01-15T09:30',
      '2026-01-15 09:30:00',
      '2026-01-15T09:30:00Z',
      '2026-01-15T09:30:00.123456789+01:00',
      '2026-01-15T09:30:00.1-0130',
      '2026-01-15T09:30Z',
      '2026-01-15T09:30+01',
    ];
    const alphabet = '0123456789-:.TZ+ tz/é';
    let state = 12345;
    const next = (n: number): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state % n;
    };
    const values = [...seeds, '', '2026', '２０２６-01-15'];
    for (let i = 0; i < 40_000; i++) {
      let value = seeds[next(seeds.length)]!;
      for (let edits = 1 + next(3); edits > 0; edits--) {
        const at = next(value.length + 1);
        const char = alphabet[next(alphabet.length)]!;
        const kind = next(3);
        if (kind === 0) value = value.slice(0, at) + char + value.slice(at);
        else if (kind === 1) value = value.slice(0, at) + value.slice(at + 1);
        else value = value.slice(0, at) + char + value.slice(at + 1);
      }
      values.push(value);
    }
    let shaped = 0;
    for (const value of values) {
      expect(hasTimestampShape(value), JSON.stringify(value)).toBe(TIMESTAMP_RE.test(value));
      if (TIMESTAMP_RE.test(value)) shaped++;
    }
    // Both answers occur often: the comparison is not between two constant functions.
    expect(shaped).toBeGreaterThan(2_000);
    expect(values.length - shaped).toBeGreaterThan(2_000);
  });
});
