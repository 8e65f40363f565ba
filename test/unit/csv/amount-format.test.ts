import { describe, expect, it } from 'vitest';
import { type NumberFormat, plainAmount } from '../../../src/sources/csv/amount-format.js';

const GERMAN: NumberFormat = { decimalSeparator: ',', thousandsSeparator: '.', minorUnits: null };
const ENGLISH: NumberFormat = { decimalSeparator: '.', thousandsSeparator: ',', minorUnits: null };
const SWISS: NumberFormat = { decimalSeparator: '.', thousandsSeparator: "'", minorUnits: null };
const FRENCH: NumberFormat = { decimalSeparator: ',', thousandsSeparator: ' ', minorUnits: null };
const COMMA_ONLY: NumberFormat = { decimalSeparator: ',', thousandsSeparator: '', minorUnits: null };
const CENTS: NumberFormat = { decimalSeparator: '.', thousandsSeparator: '', minorUnits: 2 };
const WHOLE_UNITS: NumberFormat = { decimalSeparator: '.', thousandsSeparator: '', minorUnits: 0 };

const reasonOf = (result: { ok: boolean; reason?: string }): string | undefined =>
  result.ok ? undefined : result.reason;

describe('plainAmount in a grouped format', () => {
  it('when a German amount groups thousands with dots, then it reads as a plain decimal with a dot', () => {
    expect(plainAmount('1.440,00', GERMAN)).toEqual({ ok: true, value: '1440.00' });
    expect(plainAmount('1.440.000,5', GERMAN)).toEqual({ ok: true, value: '1440000.5' });
    expect(plainAmount('1440,00', GERMAN)).toEqual({ ok: true, value: '1440.00' });
    expect(plainAmount('12', GERMAN)).toEqual({ ok: true, value: '12' });
  });

  it('when an English amount groups thousands with commas, then the commas are dropped', () => {
    // As a quoted CSV cell ("1,250.00") reaches it once the quotes are read.
    expect(plainAmount('1,250.00', ENGLISH)).toEqual({ ok: true, value: '1250.00' });
    expect(plainAmount('1250.00', ENGLISH)).toEqual({ ok: true, value: '1250.00' });
  });

  it('when a Swiss amount groups thousands with an apostrophe, then it reads', () => {
    expect(plainAmount("1'440.50", SWISS)).toEqual({ ok: true, value: '1440.50' });
  });

  it('when thousands are grouped by a space, a no-break space or a narrow no-break space, then each reads', () => {
    for (const text of ['1 440,50', '1\u00a0440,50', '1\u202f440,50']) {
      expect(plainAmount(text, FRENCH), JSON.stringify(text)).toEqual({ ok: true, value: '1440.50' });
    }
  });

  it('when the amount is negative by a leading minus, a trailing minus or parentheses, then it gets a minus', () => {
    expect(plainAmount('-238,00', GERMAN)).toEqual({ ok: true, value: '-238.00' });
    expect(plainAmount('238,00-', GERMAN)).toEqual({ ok: true, value: '-238.00' });
    expect(plainAmount('(180.50)', ENGLISH)).toEqual({ ok: true, value: '-180.50' });
    expect(plainAmount('+5,00', GERMAN)).toEqual({ ok: true, value: '5.00' });
  });

  it('when a negative amount is zero, then it is written without a minus', () => {
    expect(plainAmount('-0,00', GERMAN)).toEqual({ ok: true, value: '0.00' });
    expect(plainAmount('(0.00)', ENGLISH)).toEqual({ ok: true, value: '0.00' });
  });
});

describe('plainAmount in minor units', () => {
  it('when amounts are integers in cents, then the last two digits are the decimals', () => {
    expect(plainAmount('125000', CENTS)).toEqual({ ok: true, value: '1250.00' });
    expect(plainAmount('5', CENTS)).toEqual({ ok: true, value: '0.05' });
    expect(plainAmount('0', CENTS)).toEqual({ ok: true, value: '0.00' });
    expect(plainAmount('-125', CENTS)).toEqual({ ok: true, value: '-1.25' });
  });

  it('when the currency has no minor unit (0 decimals), then the integer is kept as it is', () => {
    expect(plainAmount('125000', WHOLE_UNITS)).toEqual({ ok: true, value: '125000' });
    expect(plainAmount('5', WHOLE_UNITS)).toEqual({ ok: true, value: '5' });
  });

  it('when an amount in minor units is not an integer, then it is refused with the form expected', () => {
    for (const text of ['12.5', '1,000', 'abc']) {
      expect(reasonOf(plainAmount(text, CENTS)), text).toBe(
        `not an amount in the form an integer in minor units, like 123456 for 1234.56: "${text}"`,
      );
    }
  });
});

describe('plainAmount refusals', () => {
  it('when the thousands are not grouped in threes, then the amount is refused with the form expected', () => {
    expect(reasonOf(plainAmount('1.44,00', GERMAN))).toBe('not an amount in the form 1.234,56: "1.44,00"');
    expect(reasonOf(plainAmount("1'44.50", SWISS))).toBe('not an amount in the form 1\'234.56: "1\'44.50"');
    expect(reasonOf(plainAmount('1  440,50', FRENCH))).toBe(
      'not an amount in the form 1 234,56: "1  440,50"',
    );
  });

  it('when a file writes decimal commas, then 12.5 is refused rather than read as twelve and a half', () => {
    const hint = '(it reads with "." as the decimal separator: check format.decimalSeparator)';
    expect(reasonOf(plainAmount('12.5', GERMAN))).toBe(`not an amount in the form 1.234,56: "12.5" ${hint}`);
    expect(reasonOf(plainAmount('12.5', COMMA_ONLY))).toBe(
      `not an amount in the form 1234,56: "12.5" ${hint}`,
    );
  });

  it('when the other decimal separator would read the amount, then the reason says to check format.decimalSeparator', () => {
    expect(reasonOf(plainAmount('1,440.00', GERMAN))).toBe(
      'not an amount in the form 1.234,56: "1,440.00" (it reads with "." as the decimal separator: check format.decimalSeparator)',
    );
    expect(reasonOf(plainAmount('1.440,00', ENGLISH))).toBe(
      'not an amount in the form 1,234.56: "1.440,00" (it reads with "," as the decimal separator: check format.decimalSeparator)',
    );
  });

  it('when the amount holds letters, two decimal parts or no digits, then it is refused without a hint', () => {
    for (const text of ['abc', '12,5.0x', '12 EUR', ',5', '5,', '-', '()', '--5']) {
      expect(reasonOf(plainAmount(text, GERMAN)), text).toBe(`not an amount in the form 1.234,56: "${text}"`);
    }
  });

  it('when the amount is empty, then it is refused', () => {
    expect(reasonOf(plainAmount('', GERMAN))).toBe('not an amount in the form 1.234,56: ""');
    expect(plainAmount('', CENTS).ok).toBe(false);
  });
});

describe('plainAmount, a grouping the format does not say', () => {
  it('when the decimal separator is right and the thousands one is not given, then the reason says which would read it', () => {
    expect(reasonOf(plainAmount('1.234,55', COMMA_ONLY))).toBe(
      'not an amount in the form 1234,56: "1.234,55" (it reads with "." between thousands: check format.thousandsSeparator)',
    );
  });
});
