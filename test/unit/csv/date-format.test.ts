import { describe, expect, it } from 'vitest';
import { dateReader, withoutTime } from '../../../src/sources/csv/date-format.js';

const date = (year: number, month: number, day: number) => ({ ok: true, value: { year, month, day } });

describe('dateReader', () => {
  it('when dates are written day first with dots, then dd.MM.yyyy reads them', () => {
    const read = dateReader('dd.MM.yyyy');
    expect(read('12.01.2026')).toEqual(date(2026, 1, 12));
    expect(read('31.12.2026')).toEqual(date(2026, 12, 31));
  });

  it('when dates are written day first or month first with slashes, then each pattern reads its own order', () => {
    expect(dateReader('d/M/yyyy')('19/1/2026')).toEqual(date(2026, 1, 19));
    expect(dateReader('M/d/yyyy')('1/19/2026')).toEqual(date(2026, 1, 19));
    expect(dateReader('MM/dd/yyyy')('01/19/2026')).toEqual(date(2026, 1, 19));
    expect(dateReader('d/M/yyyy')('1/19/2026').ok).toBe(false);
    expect(dateReader('M/d/yyyy')('19/1/2026').ok).toBe(false);
  });

  it('when dates are in the contract form, then yyyy-MM-dd reads them', () => {
    expect(dateReader('yyyy-MM-dd')('2026-01-19')).toEqual(date(2026, 1, 19));
    expect(dateReader('yyyy-MM-dd')('2024-02-29')).toEqual(date(2024, 2, 29));
  });

  it('when years have two digits, then dd.MM.yy reads them in the century around 2000', () => {
    const read = dateReader('dd.MM.yy');
    expect(read('12.01.26')).toEqual(date(2026, 1, 12));
    expect(read('12.01.99')).toEqual(date(1999, 1, 12));
    expect(read('12.01.2026').ok).toBe(false);
  });

  it('when a four-digit-year pattern meets a two-digit year, then the date is refused, not read as year 26', () => {
    // A file set to dd.MM.yyyy that writes 19.01.26 would otherwise sync invoices dated 0026-01-19.
    expect(dateReader('dd.MM.yyyy')('19.01.26')).toEqual({
      ok: false,
      reason: 'not a date in the form dd.MM.yyyy (format.dateFormat): "19.01.26"',
    });
  });

  it('when a time follows the date and the pattern has no time, then the time is ignored', () => {
    expect(dateReader('yyyy-MM-dd')('2026-01-19 14:03')).toEqual(date(2026, 1, 19));
    expect(dateReader('yyyy-MM-dd')('2026-01-19T14:03:00Z')).toEqual(date(2026, 1, 19));
    expect(dateReader('d/M/yyyy')('19/01/2026 2:03 PM')).toEqual(date(2026, 1, 19));
    expect(dateReader('M/d/yyyy')('12/31/2026 11:59 PM')).toEqual(date(2026, 12, 31));
  });

  it('when the pattern has a time, then only the date counts: a value with or without its time reads as its date', () => {
    const read = dateReader('yyyy-MM-dd HH:mm');
    expect(read('2026-01-19 14:03')).toEqual(date(2026, 1, 19));
    expect(read('2026-01-19')).toEqual(date(2026, 1, 19));
    expect(read('19.01.2026 14:03').ok).toBe(false);
  });

  it('when the pattern has a time zone, then the date is the one written, with no time zone applied', () => {
    // 23:30 at UTC-5 is already the 20th in UTC and in Europe: the document still says the 19th.
    expect(dateReader("yyyy-MM-dd'T'HH:mmXXX")('2026-01-19T23:30-05:00')).toEqual(date(2026, 1, 19));
  });

  it('when the date does not exist or is not in the pattern, then the reason names the pattern and the value', () => {
    const cases: Array<[string, string]> = [
      ['dd.MM.yyyy', '31.02.2026'],
      ['d/M/yyyy', '29/2/2025'],
      ['d/M/yyyy', '13/13/2026'],
      ['M/d/yyyy', '13/13/2026'],
      ['MM/dd/yyyy', '13/13/2026'],
      ['yyyy-MM-dd', '2026-02-30'],
      ['dd.MM.yyyy', '2026-01-19'],
      ['dd.MM.yyyy', 'yesterday'],
      ['dd.MM.yyyy', '12.01.2026x'],
      ['yyyy-MM-dd', '2026-01-19 soon'],
      ['yyyy-MM-dd', '0000-01-01'],
      ['dd.MM.yyyy', ''],
    ];
    for (const [pattern, text] of cases) {
      expect(dateReader(pattern)(text), `${pattern} ${text}`).toEqual({
        ok: false,
        reason: `not a date in the form ${pattern} (format.dateFormat): "${text}"`,
      });
    }
  });

  it('when the same text is read twice, then both reads give the same answer', () => {
    const read = dateReader('dd.MM.yyyy');
    expect([read('12.01.2026'), read('12.01.2026'), read('31.02.2026').ok, read('31.02.2026').ok]).toEqual([
      date(2026, 1, 12),
      date(2026, 1, 12),
      false,
      false,
    ]);
  });
});

describe('withoutTime', () => {
  it('when a time follows the date after a space or a T, then the date part is given', () => {
    expect(withoutTime('2026-01-19 14:03')).toBe('2026-01-19');
    expect(withoutTime('19/01/2026 2:03 PM')).toBe('19/01/2026');
    expect(withoutTime('2026-01-19T14:03:00Z')).toBe('2026-01-19');
    expect(withoutTime('12 Jan 2026 14:03')).toBe('12 Jan 2026');
  });

  it('when there is no time, then the text is given as it is', () => {
    expect(withoutTime('2026-01-19')).toBe('2026-01-19');
    expect(withoutTime('12 Jan 2026')).toBe('12 Jan 2026');
  });

  it('when what follows the date is a broken time, then it gives null', () => {
    expect(withoutTime('2026-01-19 1:2:3')).toBeNull();
  });
});
