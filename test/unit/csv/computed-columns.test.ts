import { describe, expect, it } from 'vitest';
import type { ColumnSourceSetting } from '../../../src/config/csv-format-schema.js';
import type { Stream } from '../../../src/domain/records.js';
import { checkAmount, checkDate } from '../../../src/records/field-validators.js';
import { AccountValues } from '../../../src/sources/csv/account-values.js';
import { type ColumnPlan, fileColumnName, planColumns } from '../../../src/sources/csv/column-plan.js';
import { dateReader } from '../../../src/sources/csv/date-format.js';
import { columnLetters, FileColumns } from '../../../src/sources/csv/file-columns.js';
import { kindFormat } from '../../../src/sources/csv/file-format.js';
import { FirstSeenIndex } from '../../../src/sources/csv/first-seen-index.js';
import { checkRow } from '../../../src/sources/csv/row-check.js';
import { compileShape } from '../../../src/sources/csv/row-shape.js';
import { RowShaper } from '../../../src/sources/csv/row-shaper.js';
import { addDays, ShapedRow, type ValueFormat } from '../../../src/sources/csv/shaped-row.js';

/**
 * Values computed within a row, in a file without a header (Sage 50's audit trail: A type, B
 * account, E date, F reference, H net, J tax): amounts added up, a date plus days, the days an
 * account's row of the accounts file gives.
 */
const AUDIT = new FileColumns(columnLetters(15), true);
const UK: ValueFormat = {
  number: { decimalSeparator: '.', thousandsSeparator: ',', minorUnits: null },
  date: dateReader('dd/MM/yyyy'),
  dateFormat: 'dd/MM/yyyy',
};
const INVOICE_COLUMNS: Record<string, ColumnSourceSetting> = {
  sourceId: 'F',
  number: 'F',
  accountSourceId: 'B',
  issuedDate: 'E',
  dueDate: { date: 'E', plusDays: 30 },
  totalAmount: { sum: ['H', 'J'] },
  taxAmount: 'J',
};

const newValues = () => new AccountValues({ patterns: ['CUSTOMERS*.CSV'], headerless: true });

function planOf(
  columns: Record<string, ColumnSourceSetting>,
  values: AccountValues = newValues(),
  stream: Stream = 'invoices',
): ColumnPlan {
  const result = planColumns(stream, AUDIT, columns, new Map(), new Map(), { accountValues: values });
  if (!result.ok) throw new Error(result.reason);
  return result.plan;
}

/** An audit trail row: its cells by letter. */
const row = (cells: Partial<Record<'A' | 'B' | 'E' | 'F' | 'H' | 'J', string>>): string[] =>
  columnLetters(15).map((letter) => cells[letter as keyof typeof cells] ?? '');

const SPLIT = { A: 'SI', B: 'BRAM001', E: '05/01/2026', F: 'INV1001' };

describe('columns by letter in a file without a header', () => {
  it('when columns are named by letter or number, then each reads its position, and a report names it by letter', () => {
    const plan = planOf({ ...INVOICE_COLUMNS, number: 6 });
    const view = new ShapedRow(row({ ...SPLIT, H: '1,200.00', J: '240.00' }), plan, UK);
    expect(['sourceId', 'number', 'accountSourceId', 'issuedDate'].map((c) => view.get(c))).toEqual([
      'INV1001',
      'INV1001',
      'BRAM001',
      '2026-01-05',
    ]);
    expect(['issuedDate', 'totalAmount', 'dueDate'].map((c) => fileColumnName(plan, c))).toEqual([
      'column E (issuedDate)',
      'columns H + J (totalAmount)',
      'column E (dueDate)',
    ]);
  });

  it("when a column letter is beyond the file's first row, then the file cannot be read, the reason naming the key and the column", () => {
    const result = planColumns('invoices', AUDIT, { ...INVOICE_COLUMNS, taxAmount: 'AD' }, new Map());
    expect(result).toEqual({
      ok: false,
      reason:
        "columns.invoices.taxAmount names column AD, beyond the 15 columns of the file's first row (A to O)",
    });
    const summand = planColumns(
      'invoices',
      AUDIT,
      { ...INVOICE_COLUMNS, totalAmount: { sum: ['H', 'P'] } },
      new Map(),
    );
    expect(summand.ok ? '' : summand.reason).toMatch(
      /^columns\.invoices\.totalAmount names column P, beyond/,
    );
  });

  it('when a required column is missing, then the reason asks for the columns by letter', () => {
    const { sourceId: _, ...columns } = INVOICE_COLUMNS;
    const result = planColumns('invoices', AUDIT, columns, new Map());
    expect(result.ok ? '' : result.reason).toBe(
      'missing required column "sourceId" of invoices: name the column (by letter: A, B, ...) (or a constant { value: ... }) in columns.invoices',
    );
  });

  it("when a row is narrower than the file's first row, then it is refused naming the columns read that it lacks", () => {
    const plan = planOf(INVOICE_COLUMNS);
    const fields = row({ ...SPLIT, H: '10.00' }).slice(0, 9);
    const checked = checkRow(
      { kind: 'invoices', view: new ShapedRow(fields, plan, UK), line: 7, fields },
      {
        header: {
          index: new Map(),
          cells: columnLetters(15),
          unknown: [],
          warnings: [],
          reportColumns: [],
          headerless: true,
        },
        stream: 'invoices',
        firstLineOf: new FirstSeenIndex(),
        grouped: false,
      },
    );
    expect(checked.issues[0]).toEqual({
      column: '',
      reason:
        "the row has 9 columns (A to I) but the file's first row has 15 (A to O): it has no column J (totalAmount), column J (taxAmount)",
    });
  });
});

describe('sum: amounts of the row added up', () => {
  const plan = planOf(INVOICE_COLUMNS);

  it('when net and tax are summed, then the total is exact (no float), in the file format', () => {
    const view = new ShapedRow(row({ ...SPLIT, H: '1,200.10', J: '0.20' }), plan, UK);
    expect([view.get('totalAmount'), view.get('taxAmount')]).toEqual(['1200.30', '0.20']);
    expect(new ShapedRow(row({ H: '0.1', J: '0.2' }), plan, UK).get('totalAmount')).toBe('0.30');
  });

  it('when a summand is empty, then it counts as zero; when all are, then the column is empty', () => {
    expect(new ShapedRow(row({ H: '316.67' }), plan, UK).get('totalAmount')).toBe('316.67');
    expect(new ShapedRow(row({}), plan, UK).get('totalAmount')).toBe('');
  });

  it('when a summand is no amount, then the column cannot be read and the reason names that column', () => {
    const view = new ShapedRow(row({ H: '45.00', J: 'n/a' }), plan, UK);
    expect(checkAmount(view.get('totalAmount')).ok).toBe(false);
    expect(view.explain('totalAmount')).toBe('column J: not an amount in the form 1,234.56: "n/a"');
  });

  it('when a summand has more decimals than kept, then the reason names its column and says so', () => {
    const view = new ShapedRow(row({ H: '1.0000001', J: '0' }), plan, UK);
    view.get('totalAmount');
    expect(view.explain('totalAmount')).toMatch(/^column H: has 7 decimals, more than the 6 kept/);
  });

  it("when the view negates or the sum is below zero, then the sign is the sum's", () => {
    const negated = new ShapedRow(row({ H: '-150.00', J: '-30.00' }), plan, UK, { negate: true });
    expect(negated.get('totalAmount')).toBe('180.00');
    const credit = new ShapedRow(row({ H: '-150.00', J: '30.00' }), plan, UK);
    expect([credit.isNegative('totalAmount'), credit.get('totalAmount')]).toEqual([true, '-120.00']);
    expect(new ShapedRow(row({ H: '150.00', J: '-30.00' }), plan, UK).isNegative('totalAmount')).toBe(false);
  });
});

describe('plusDays: a date of the row plus days', () => {
  it('when the days are a constant, then the date moves by them across months and leap years', () => {
    const plan = planOf(INVOICE_COLUMNS);
    expect(new ShapedRow(row({ E: '05/01/2026' }), plan, UK).get('dueDate')).toBe('2026-02-04');
    expect(new ShapedRow(row({ E: '15/02/2028' }), plan, UK).get('dueDate')).toBe('2028-03-16');
    expect(new ShapedRow(row({ E: '15/12/2026' }), plan, UK).get('dueDate')).toBe('2027-01-14');
    expect(addDays({ year: 2026, month: 1, day: 31 }, 0)).toEqual({ year: 2026, month: 1, day: 31 });
  });

  it('when the date cannot be read, then the column says why in the file format', () => {
    const view = new ShapedRow(row({ E: '2026-01-05' }), planOf(INVOICE_COLUMNS), UK);
    expect(checkDate(view.get('dueDate')).ok).toBe(false);
    expect(view.explain('dueDate')).toBe(
      'not a date in the form dd/MM/yyyy (format.dateFormat): "2026-01-05"',
    );
  });

  describe("the account's days, from the accounts file of the same pass", () => {
    const columns = { ...INVOICE_COLUMNS, dueDate: { date: 'E', plusDays: { accountColumn: 'AD' } } };

    it("when the accounts file read in this pass gives the account's days, then the due date adds them", () => {
      const values = newValues();
      values.fileRead('CUSTOMERS.CSV');
      values.record('AD', 'BRAM001', { value: '45', file: 'CUSTOMERS.CSV', line: 1 });
      const view = new ShapedRow(row({ ...SPLIT }), planOf(columns, values), UK);
      expect(view.get('dueDate')).toBe('2026-02-19');
    });

    it("when no accounts file was read in this pass, then the row's due date fails, saying which file to drop with it", () => {
      const view = new ShapedRow(row({ ...SPLIT }), planOf(columns), UK);
      expect(checkDate(view.get('dueDate')).ok).toBe(false);
      expect(view.explain('dueDate')).toBe(
        'the days in column AD of account "BRAM001" in the accounts file are not known: no accounts file was read in this pass; drop the accounts file ("CUSTOMERS*.CSV") together with this one',
      );
    });

    it('when the accounts file read holds no such account, then the reason names the file read', () => {
      const values = newValues();
      values.fileRead('CUSTOMERS.CSV');
      const view = new ShapedRow(row({ ...SPLIT, B: 'NOPE01' }), planOf(columns, values), UK);
      view.get('dueDate');
      expect(view.explain('dueDate')).toBe(
        'the days in column AD of account "NOPE01" in the accounts file are not known: the accounts file read in this pass (CUSTOMERS.CSV) holds no account "NOPE01"; drop the accounts file that has it together with this one',
      );
    });

    it("when the account's days are empty or not a whole number, then the reason names the column, the file and the line", () => {
      const values = newValues();
      values.fileRead('CUSTOMERS.CSV');
      values.record('AD', 'BRAM001', { value: '', file: 'CUSTOMERS.CSV', line: 1 });
      values.record('AD', 'OCON001', { value: '30.5', file: 'CUSTOMERS.CSV', line: 3 });
      const plan = planOf(columns, values);
      const empty = new ShapedRow(row({ ...SPLIT }), plan, UK);
      empty.get('dueDate');
      expect(empty.explain('dueDate')).toBe(
        'the days to add are empty in column AD of account "BRAM001" (CUSTOMERS.CSV, line 1): fill them in the accounts file',
      );
      const odd = new ShapedRow(row({ ...SPLIT, B: 'OCON001' }), plan, UK);
      odd.get('dueDate');
      expect(odd.explain('dueDate')).toBe(
        'the days to add are not a whole number of days in column AD of account "OCON001" (CUSTOMERS.CSV, line 3): "30.5"',
      );
    });

    it('when the row names no account, then the due date is empty (the account column says why)', () => {
      const view = new ShapedRow(row({ ...SPLIT, B: '' }), planOf(columns), UK);
      expect(view.get('dueDate')).toBe('');
    });

    it('when a new pass starts, then the values of the last one are forgotten', () => {
      const values = newValues();
      values.fileRead('CUSTOMERS.CSV');
      values.record('AD', 'BRAM001', { value: '30', file: 'CUSTOMERS.CSV', line: 1 });
      values.clear();
      expect([values.lookup('AD', 'BRAM001'), values.files]).toEqual([undefined, []]);
    });
  });
});

describe('a sum within a row and the rows of one document', () => {
  it("when a document's splits are grouped, then its total is the sum of each split's net + tax, and a credit note's stays positive", () => {
    const result = compileShape(
      'invoices',
      AUDIT,
      {
        columns: { invoices: INVOICE_COLUMNS },
        rows: {
          invoices: {
            kindFrom: { column: 'A', invoices: ['SI'], creditNotes: ['SC'] },
            group: { sum: ['totalAmount', 'taxAmount'] },
          },
        },
      },
      kindFormat(
        { format: { headerLine: 'none', thousandsSeparator: ',', dateFormat: 'dd/MM/yyyy' } },
        'invoices',
      ),
      () => new Map(),
    );
    if (!result.ok) throw new Error(result.reason);
    const shaper = new RowShaper(result.shape);
    const made = [
      row({ ...SPLIT, H: '1,200.00', J: '240.00' }),
      row({ ...SPLIT, H: '45.00', J: '9.00' }),
      row({ A: 'SR', B: 'BRAM001', E: '25/01/2026', F: 'BACS', H: '500.00', J: '0.00' }),
      row({ A: 'SC', B: 'BRAM001', E: '20/01/2026', F: 'CRN0041', H: '150.00', J: '30.00' }),
    ].flatMap((fields, i) => shaper.take({ line: i + 1, fields }));
    made.push(...shaper.flush());
    expect(
      made.map((m) => [m.kind, m.line, m.rows, m.view.get('totalAmount'), m.view.get('taxAmount')]),
    ).toEqual([
      ['invoices', 1, 2, '1494.00', '249.00'],
      ['creditNotes', 4, 1, '180.00', '30.00'],
    ]);
    expect(shaper.skipped).toBe(1);
  });
});
