import { describe, expect, it } from 'vitest';
import { formatDecimal, normalizeDecimal, parseDecimal } from '../../../src/domain/decimal.js';

describe('normalizeDecimal', () => {
  it.each([
    ['12', '12.00'],
    ['12.3', '12.30'],
    ['+007.500', '7.50'],
    ['-0', '0.00'],
    ['-0.000', '0.00'],
    ['0.000001', '0.000001'],
    ['-12.345600', '-12.3456'],
    ['000', '0.00'],
    [' 5.1 ', '5.10'],
  ])('"%s" -> "%s"', (text, expected) => {
    expect(normalizeDecimal(text)).toBe(expected);
  });

  it('gives what bigint arithmetic gives, on generated amounts', () => {
    let seed = 42;
    const next = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const digits = (n: number) => Array.from({ length: n }, () => String(next(10))).join('');
    for (let i = 0; i < 5000; i++) {
      const sign = ['', '+', '-'][next(3)]!;
      const fraction = next(4) === 0 ? '' : `.${digits(1 + next(6))}`;
      const text = `${sign}${digits(1 + next(12))}${fraction}`;
      expect(normalizeDecimal(text), text).toBe(formatDecimal(parseDecimal(text)));
    }
  });

  it('refuses what is not a decimal, naming it', () => {
    for (const text of ['', '1,5', '1e3', '1.', '.5', '1.1234567', 'abc'])
      expect(() => normalizeDecimal(text), text).toThrow(`not a decimal amount: "${text}"`);
  });
});
