import { describe, expect, it } from 'vitest';
import type { ColumnSourceSetting } from '../../../src/config/csv-format-schema.js';
import type { Stream } from '../../../src/domain/records.js';
import { checkAmount, checkDate } from '../../../src/records/field-validators.js';
import type { NumberFormat } from '../../../src/sources/csv/amount-format.js';
import { type ColumnPlan, planColumns } from '../../../src/sources/csv/column-plan.js';
import { dateReader } from '../../../src/sources/csv/date-format.js';
import { ShapedRow, type ValueFormat } from '../../../src/sources/csv/shaped-row.js';
import { GERMAN_INVOICE_COLUMNS } from '../../support/german-columns.js';

const HEADER = ['Nr', 'Kunde', 'Datum', 'Fällig', 'Brutto', 'MwSt', 'Offen', 'Straße', 'Ort', 'Land'];
const INVOICE_COLUMNS = GERMAN_INVOICE_COLUMNS;

const GERMAN: ValueFormat = {
  number: { decimalSeparator: ',', thousandsSeparator: '.', minorUnits: null },
  date: dateReader('dd.MM.yyyy'),
  dateFormat: 'dd.MM.yyyy',
};
const CONTRACT: ValueFormat = {
  number: { decimalSeparator: '.', thousandsSeparator: '', minorUnits: null },
  date: dateReader('yyyy-MM-dd'),
  dateFormat: 'yyyy-MM-dd',
};

function planOf(
  columns: Record<string, ColumnSourceSetting>,
  stream: Stream = 'invoices',
  header: readonly string[] = HEADER,
): ColumnPlan {
  const result = planColumns(stream, header, columns, new Map());
  if (!result.ok) throw new Error(result.reason);
  return result.plan;
}

/** A row of HEADER: Nr, Kunde, Datum, Fällig, Brutto, MwSt, Offen, Straße, Ort, Land. */
const row = (values: Partial<Record<(typeof HEADER)[number], string>>): string[] =>
  HEADER.map((header) => values[header] ?? '');

const A_ROW = row({ Nr: 'R-1', Kunde: 'K-7', Datum: '12.01.2026', Fällig: '26.01.2026', Brutto: '1.440,00' });

describe('ShapedRow values', () => {
  it('when amounts and dates are in the file format, then they are given in the contract form', () => {
    const view = new ShapedRow(
      row({ Nr: 'R-1', Datum: '12.01.2026', Fällig: '26.01.2026', Brutto: '1.440,00', MwSt: '230,00' }),
      planOf(INVOICE_COLUMNS),
      GERMAN,
    );
    expect(['totalAmount', 'taxAmount', 'issuedDate', 'dueDate', 'sourceId'].map((c) => view.get(c))).toEqual(
      ['1440.00', '230.00', '2026-01-12', '2026-01-26', 'R-1'],
    );
  });

  it('when the file is in the contract format, then amounts are given as written', () => {
    const view = new ShapedRow(row({ Brutto: '1440.5' }), planOf(INVOICE_COLUMNS), CONTRACT);
    expect(view.get('totalAmount')).toBe('1440.5');
  });

  it('when a column is a constant, headers joined, the first with a value, or a translated value, then each reads', () => {
    const plan = planOf({
      ...INVOICE_COLUMNS,
      taxAmount: { value: '0' },
      'billingAddress.street': ['Straße', 'Ort'],
      dueDate: { first: ['Fällig', 'Datum'] },
      'billingAddress.country': { header: 'Land', map: { deutschland: 'DE' } },
    });
    const view = new ShapedRow(
      row({ Datum: '12.01.2026', Straße: ' Hauptstr. 1 ', Ort: 'Berlin', Land: ' DEUTSCHLAND ' }),
      plan,
      GERMAN,
    );
    expect(
      ['taxAmount', 'billingAddress.street', 'dueDate', 'billingAddress.country'].map((c) => view.get(c)),
    ).toEqual(['0', 'Hauptstr. 1, Berlin', '2026-01-12', 'DE']);
  });

  it('when joined headers are partly empty or a translated value is not in the map, then the blanks are left out and the value kept', () => {
    const plan = planOf({
      ...INVOICE_COLUMNS,
      'billingAddress.street': ['Straße', 'Ort'],
      'billingAddress.country': { header: 'Land', map: { deutschland: 'DE' } },
    });
    const view = new ShapedRow(row({ Ort: 'Berlin', Land: 'AT' }), plan, GERMAN);
    expect([view.get('billingAddress.street'), view.get('billingAddress.country')]).toEqual(['Berlin', 'AT']);
  });

  it('when a column has no source or an empty cell, then it is empty', () => {
    const view = new ShapedRow(row({ Nr: 'R-1' }), planOf(INVOICE_COLUMNS), GERMAN);
    expect([view.get('updatedAt'), view.get('totalAmount'), view.get('issuedDate')]).toEqual(['', '', '']);
  });

  it('when the view negates, then each amount changes sign and dates stay', () => {
    const view = new ShapedRow(
      row({ Brutto: '-238,00', MwSt: '-38,00', Datum: '12.01.2026' }),
      planOf(INVOICE_COLUMNS),
      GERMAN,
      { negate: true },
    );
    expect([view.get('totalAmount'), view.get('taxAmount'), view.get('issuedDate')]).toEqual([
      '238.00',
      '38.00',
      '2026-01-12',
    ]);
  });

  it('when a value is overridden, then the override is given instead of the cell', () => {
    const view = new ShapedRow(A_ROW, planOf(INVOICE_COLUMNS), GERMAN, {
      overrides: new Map([['totalAmount', '2880.00']]),
    });
    expect(view.get('totalAmount')).toBe('2880.00');
  });
});

describe('ShapedRow paid amount from the open amount', () => {
  const plan = planOf({ ...INVOICE_COLUMNS, openAmount: 'Offen' });

  it('when the file gives what is still open, then paidAmount is total minus open, exactly', () => {
    const view = new ShapedRow(row({ Brutto: '1.440,30', Offen: '0,10' }), plan, GERMAN);
    expect([view.has('paidAmount'), view.get('paidAmount')]).toEqual([true, '1440.20']);
  });

  it('when the open amount or the total is empty, then paidAmount is empty', () => {
    expect(new ShapedRow(row({ Brutto: '100,00' }), plan, GERMAN).get('paidAmount')).toBe('');
    expect(new ShapedRow(row({ Offen: '100,00' }), plan, GERMAN).get('paidAmount')).toBe('');
  });

  it('when the open amount cannot be read, then paidAmount is empty and the open amount says why', () => {
    const view = new ShapedRow(row({ Brutto: '100,00', Offen: 'n/a' }), plan, GERMAN);
    expect([view.get('paidAmount'), view.explain('openAmount')]).toEqual([
      '',
      'not an amount in the form 1.234,56: "n/a"',
    ]);
  });

  it('when neither paidAmount nor openAmount has a source, then the row has no paidAmount', () => {
    const view = new ShapedRow(A_ROW, planOf(INVOICE_COLUMNS), GERMAN);
    expect([view.has('paidAmount'), view.get('paidAmount')]).toEqual([false, '']);
  });
});

describe('ShapedRow values it cannot read', () => {
  it('when an amount is not in the file format, then no contract check accepts it and explain says why', () => {
    const view = new ShapedRow(row({ Brutto: '12.5' }), planOf(INVOICE_COLUMNS), GERMAN);
    expect(checkAmount(view.get('totalAmount')).ok).toBe(false);
    expect(view.explain('totalAmount')).toBe(
      'not an amount in the form 1.234,56: "12.5" (it reads with "." as the decimal separator: check format.decimalSeparator)',
    );
  });

  it('when a date is not in the file pattern, then no contract check accepts it and explain names the pattern', () => {
    const view = new ShapedRow(
      row({ Datum: '2026-01-12', Fällig: '31.02.2026' }),
      planOf(INVOICE_COLUMNS),
      GERMAN,
    );
    expect([checkDate(view.get('issuedDate')).ok, checkDate(view.get('dueDate')).ok]).toEqual([false, false]);
    expect([view.explain('issuedDate'), view.explain('dueDate')]).toEqual([
      'not a date in the form dd.MM.yyyy (format.dateFormat): "2026-01-12"',
      'not a date in the form dd.MM.yyyy (format.dateFormat): "31.02.2026"',
    ]);
  });

  it('when every value reads, then explain has nothing to say', () => {
    const view = new ShapedRow(A_ROW, planOf(INVOICE_COLUMNS), GERMAN);
    for (const column of ['totalAmount', 'issuedDate', 'dueDate']) view.get(column);
    expect(view.explain('totalAmount')).toBeUndefined();
    expect(view.explain('issuedDate')).toBeUndefined();
  });

  it('when raw is asked, then the value is given as the file writes it', () => {
    const view = new ShapedRow(A_ROW, planOf(INVOICE_COLUMNS), GERMAN);
    expect([view.raw('totalAmount'), view.raw('issuedDate'), view.raw('file')]).toEqual([
      '1.440,00',
      '12.01.2026',
      '',
    ]);
  });

  it('when amounts are in minor units, then they are given with their decimals', () => {
    const cents: NumberFormat = { decimalSeparator: '.', thousandsSeparator: '', minorUnits: 2 };
    const view = new ShapedRow(row({ Brutto: '144000', MwSt: '5' }), planOf(INVOICE_COLUMNS), {
      ...CONTRACT,
      number: cents,
    });
    expect([view.get('totalAmount'), view.get('taxAmount')]).toEqual(['1440.00', '0.05']);
  });
});

describe('ShapedRow in the contract format, meeting an export written otherwise', () => {
  it('when a file left in the default format holds 1.234,55, then the value is refused with the setting to check, and a negative credit note quotes its sign', () => {
    const view = new ShapedRow(
      row({ Brutto: '1.234,55', MwSt: '-119,00' }),
      planOf(INVOICE_COLUMNS),
      CONTRACT,
      {
        negate: true,
      },
    );
    expect(checkAmount(view.get('totalAmount')).ok).toBe(false);
    expect(view.explain('totalAmount')).toBe(
      'not an amount in the form 1234.56: "1.234,55" (it reads with "," as the decimal separator: check format.decimalSeparator)',
    );
    expect(checkAmount(view.get('taxAmount')).ok).toBe(false);
    expect(view.explain('taxAmount')).toContain('"-119,00"');
  });
});
