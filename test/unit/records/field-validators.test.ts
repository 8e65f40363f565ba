import { describe, expect, it } from 'vitest';
import { isDecimal } from '../../../src/domain/decimal.js';
import {
  checkAmount,
  checkCountry,
  checkCurrency,
  checkDate,
  checkTimestamp,
  daysInMonth,
  isPlainDecimal,
  parseTags,
} from '../../../src/records/field-validators.js';

const reasonOf = (result: { ok: boolean; reason?: string }): string | undefined =>
  result.ok ? undefined : result.reason;

describe('checkDate', () => {
  it('when the date is a real YYYY-MM-DD date, then it gives its parts', () => {
    expect(checkDate('2026-01-15')).toEqual({ ok: true, value: { year: 2026, month: 1, day: 15 } });
    expect(checkDate('2024-02-29')).toEqual({ ok: true, value: { year: 2024, month: 2, day: 29 } });
    expect(checkDate('2000-02-29').ok).toBe(true);
  });

  it('when the day does not exist in that month, then it is refused as not a calendar date', () => {
    for (const text of [
      '2026-02-30',
      '2025-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '0000-01-01',
    ]) {
      expect(reasonOf(checkDate(text)), text).toBe(`not a calendar date: "${text}"`);
    }
  });

  it('when the text is not in the YYYY-MM-DD form, then the reason says which form is expected', () => {
    for (const text of [
      '15/01/2026',
      '2026-1-5',
      '2026-01-15T00:00:00Z',
      '20260115',
      '2026-0a-15',
      ' 2026-01-15',
    ]) {
      expect(reasonOf(checkDate(text)), text).toBe(`not a date in the form YYYY-MM-DD: "${text}"`);
    }
  });

  it('when asked for days in a month, then leap years follow the Gregorian rule', () => {
    expect([daysInMonth(2024, 2), daysInMonth(2100, 2), daysInMonth(2000, 2), daysInMonth(2026, 11)]).toEqual(
      [29, 28, 29, 30],
    );
  });
});

describe('checkAmount', () => {
  it('when the amount is a decimal with a dot, then it is kept as written', () => {
    for (const text of ['0', '12', '12.5', '1234.50', '-3.25', '+7', '0.000001']) {
      expect(checkAmount(text), text).toEqual({ ok: true, value: text });
    }
  });

  it('when the amount uses a comma, an exponent or letters, then it is refused as not an amount', () => {
    for (const text of ['12,50', '1e3', 'abc', '.5', '5.', '1 000', '--1', '12.5€', 'NaN', 'Infinity']) {
      expect(reasonOf(checkAmount(text)), text).toBe(
        `not an amount (a decimal with a dot, like 1234.50): "${text}"`,
      );
    }
  });

  it('when an amount has zeros past the 6th decimal, then they are dropped and the amount is kept', () => {
    expect(checkAmount('1440.00000000')).toEqual({ ok: true, value: '1440.00' });
    expect(checkAmount('1440.1234560')).toEqual({ ok: true, value: '1440.123456' });
  });

  it('when an amount has digits past the 6th decimal, then the reason is its precision, not its form', () => {
    expect(reasonOf(checkAmount('1440.123456789'))).toBe(
      'has 9 decimals, more than the 6 kept (and the digits past them are not zeros): "1440.123456789"',
    );
    expect(reasonOf(checkAmount('1.1234567'))).toBe(
      'has 7 decimals, more than the 6 kept (and the digits past them are not zeros): "1.1234567"',
    );
  });

  it('when compared with the domain isDecimal, then isPlainDecimal agrees on every sample', () => {
    const samples = [
      '',
      '0',
      '-0',
      '+',
      '-',
      '1.',
      '.1',
      '1.0',
      '1.000000',
      '1.0000000',
      '12,5',
      '١٢',
      '1e5',
      ' 1',
      '99999999999999999999.99',
    ];
    for (const text of samples) expect(isPlainDecimal(text), JSON.stringify(text)).toBe(isDecimal(text));
  });
});

describe('currency and country codes', () => {
  it('when the currency is three letters in any case, then it passes upper case', () => {
    expect(checkCurrency('EUR')).toEqual({ ok: true, value: 'EUR' });
    expect(checkCurrency('eur')).toEqual({ ok: true, value: 'EUR' });
    expect(checkCurrency('Usd')).toEqual({ ok: true, value: 'USD' });
  });

  it('when the currency is not three letters, then the reason names ISO 4217', () => {
    for (const text of ['EURO', 'E1R', 'EU', '€', 'euro']) {
      expect(reasonOf(checkCurrency(text)), text).toBe(`not an ISO 4217 currency code (like EUR): "${text}"`);
    }
  });

  it('when the country is a code in any case or a country name, then it passes as its alpha-2 code', () => {
    expect(checkCountry('FR')).toEqual({ ok: true, value: 'FR' });
    expect(checkCountry('fr')).toEqual({ ok: true, value: 'FR' });
    expect(checkCountry('Germany')).toEqual({ ok: true, value: 'DE' });
    expect(checkCountry('Royaume-Uni')).toEqual({ ok: true, value: 'GB' });
    // Two capitals, but not ISO's: the United Kingdom's code is GB (Xero writes UK).
    expect(checkCountry('UK')).toEqual({ ok: true, value: 'GB' });
  });

  it('when the country is neither a code nor a name, then the reason names ISO 3166 and names', () => {
    for (const text of ['Atlantis', 'F', '12', 'Europe']) {
      expect(reasonOf(checkCountry(text)), text).toBe(
        `not an ISO 3166-1 alpha-2 country code (like FR) nor a country's name: "${text}"`,
      );
    }
  });
});

describe('checkTimestamp', () => {
  it('when the value is an ISO 8601 date or date-time, then it is kept as written', () => {
    for (const text of [
      '2026-01-15',
      '2026-01-15T09:30',
      '2026-01-15T09:30:00Z',
      '2026-01-15 09:30:00',
      '2026-01-15T09:30:00.123+01:00',
      '2026-01-15T23:59:59-0530',
    ]) {
      expect(checkTimestamp(text), text).toEqual({ ok: true, value: text });
    }
  });

  it('when a part is out of range or the form is wrong, then it is refused', () => {
    for (const text of [
      '2026-02-30T10:00:00Z',
      '2026-01-15T24:00:00Z',
      '2026-01-15T10:60:00Z',
      '2026-01-15T10:00:61Z',
      '2026-01-15T10:00:00+25:00',
      '15/01/2026 10:00',
      '2026-01-15T10',
      'yesterday',
    ]) {
      expect(reasonOf(checkTimestamp(text)), text).toBe(
        `not an ISO 8601 date-time (like 2026-01-15T09:30:00Z): "${text}"`,
      );
    }
  });
});

describe('parseTags', () => {
  it('when tags are separated by |, then blanks are dropped, names trimmed and kept once in order', () => {
    expect(parseTags('vip| france ||vip|b2b')).toEqual(['vip', 'france', 'b2b']);
    expect(parseTags('')).toEqual([]);
  });
});
