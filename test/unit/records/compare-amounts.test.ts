import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../../src/domain/decimal.js';
import { compareAmounts, isPlainDecimal } from '../../../src/records/field-validators.js';

const bigintOrder = (a: string, b: string): number => {
  const d = parseDecimal(a) - parseDecimal(b);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
};

describe('compareAmounts', () => {
  it('when two amounts are written differently, then they are ordered by value as bigint arithmetic orders them', () => {
    const amounts = [
      '0',
      '-0',
      '+0',
      '-0.00',
      '0.000001',
      '-0.000001',
      '1',
      '01',
      '+1.0',
      '1.000001',
      '-1',
      '-01.50',
      '-1.5',
      '9.99',
      '10',
      '10.00',
      '099.999999',
      '100',
      '-100.000001',
      '123456789012345678901234567890.5',
      '123456789012345678901234567890.49',
    ];
    for (const a of amounts) {
      expect(isPlainDecimal(a), a).toBe(true);
      for (const b of amounts) {
        expect(Math.sign(compareAmounts(a, b)), `${a} vs ${b}`).toBe(bigintOrder(a, b));
      }
    }
  });
});
