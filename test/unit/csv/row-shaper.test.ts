import { describe, expect, it } from 'vitest';
import type { Stream } from '../../../src/domain/records.js';
import { kindFormat } from '../../../src/sources/csv/file-format.js';
import { compileShape, type ShapeSettings } from '../../../src/sources/csv/row-shape.js';
import { RowShaper, type ShapedRecordRow } from '../../../src/sources/csv/row-shaper.js';
import { GERMAN_INVOICE_COLUMNS } from '../../support/german-columns.js';

const HEADER = ['Nr', 'Kunde', 'Name', 'Datum', 'Fällig', 'Brutto', 'MwSt', 'Offen', 'Art'] as const;
type Header = (typeof HEADER)[number];
const INVOICE_COLUMNS = GERMAN_INVOICE_COLUMNS;
const ACCOUNT_COLUMNS = { fullName: 'Name', currencyCode: { value: 'EUR' } };

type RowsSettings = NonNullable<ShapeSettings['rows']>['invoices'];

function compileFor(rows: RowsSettings, stream: Stream) {
  const format = kindFormat(
    { format: { decimalSeparator: ',', thousandsSeparator: '.', dateFormat: 'dd.MM.yyyy' } },
    stream,
  );
  const { dueDate: _, ...creditColumns } = INVOICE_COLUMNS;
  const settings: ShapeSettings = {
    columns: {
      invoices: { ...INVOICE_COLUMNS, openAmount: 'Offen' },
      // An invoices file's credit notes read like its invoices.
      creditNotes: stream === 'creditNotes' ? creditColumns : undefined,
      accounts: ACCOUNT_COLUMNS,
    },
    rows: { [stream]: rows },
  };
  return compileShape(stream, HEADER, settings, format, () => new Map());
}

function shaperOf(rows: RowsSettings, stream: Stream = 'invoices'): RowShaper {
  const result = compileFor(rows, stream);
  if (!result.ok) throw new Error(result.reason);
  return new RowShaper(result.shape);
}

/** A row of HEADER from line 2 on, as the CSV reader gives it. */
const row = (line: number, values: Partial<Record<Header, string>>) => ({
  line,
  fields: HEADER.map((header) => values[header] ?? ''),
});

const DOC = { Kunde: 'K-1', Name: 'Café Müller', Datum: '12.01.2026', Fällig: '26.01.2026', MwSt: '0,00' };

/** A record-to-be as a user reads it in a report: an account's name, a document's amounts. */
interface Made {
  kind: Stream;
  line: number;
  sourceId: string;
  fullName?: string;
  totalAmount?: string;
  taxAmount?: string;
  issues?: ShapedRecordRow['issues'];
}

/** Every record-to-be of the rows, the last group flushed. */
function shapeAll(shaper: RowShaper, rows: ReturnType<typeof row>[]): Made[] {
  const made: ShapedRecordRow[] = [];
  for (const r of rows) made.push(...shaper.take(r));
  made.push(...shaper.flush());
  return made.map((m) => ({
    kind: m.kind,
    line: m.line,
    sourceId: m.view.get('sourceId'),
    ...(m.kind === 'accounts'
      ? { fullName: m.view.get('fullName') }
      : { totalAmount: m.view.get('totalAmount'), taxAmount: m.view.get('taxAmount') }),
    ...(m.issues.length > 0 ? { issues: m.issues } : {}),
  }));
}

describe('RowShaper skip rules and kinds', () => {
  it('when rows match a skip rule (matches, equals or empty), then they make nothing and are counted', () => {
    const shaper = shaperOf({
      skip: [
        { column: 'Nr', matches: '^summe' },
        { column: 'Art', equals: ' storno ' },
        { column: 'Kunde', empty: true },
      ],
    });
    const made = shapeAll(shaper, [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00' }),
      row(3, { ...DOC, Nr: 'Summe Januar', Brutto: '100,00' }),
      row(4, { ...DOC, Nr: 'R-2', Brutto: '50,00', Art: 'STORNO' }),
      row(5, { ...DOC, Nr: 'R-3', Brutto: '50,00', Kunde: '  ' }),
      row(6, { ...DOC, Nr: 'R-4', Brutto: '70,00' }),
    ]);
    expect(made.map((m) => [m.line, m.sourceId])).toEqual([
      [2, 'R-1'],
      [6, 'R-4'],
    ]);
    expect(shaper.skipped).toBe(3);
  });

  it('when kindFrom maps a row value to a kind, then the row makes that kind and others are skipped and counted', () => {
    const shaper = shaperOf({ kindFrom: { column: 'Art', invoices: ['RE'], creditNotes: ['GS'] } });
    const made = shapeAll(shaper, [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00', Art: 're' }),
      row(3, { ...DOC, Nr: 'G-1', Brutto: '40,00', Art: ' GS ' }),
      row(4, { ...DOC, Nr: 'A-1', Brutto: '10,00', Art: 'AB' }),
      row(5, { ...DOC, Nr: 'X-1', Brutto: '10,00', Art: '' }),
    ]);
    expect(made.map((m) => [m.kind, m.sourceId])).toEqual([
      ['invoices', 'R-1'],
      ['creditNotes', 'G-1'],
    ]);
    expect(shaper.skipped).toBe(2);
  });

  it('when a credit-notes file kindFrom lists invoice values, then reading an invoice row does not throw', () => {
    // compileShape plans invoices only for an invoices file. Refusing the file when it is compiled,
    // or reading the row as an invoice, would both do: an exception in the middle of a file would not.
    const rows = { kindFrom: { column: 'Art', invoices: ['RE'], creditNotes: ['GS'] } };
    const read = () => {
      const compiled = compileFor(rows, 'creditNotes');
      return compiled.ok
        ? shapeAll(new RowShaper(compiled.shape), [
            row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00', Art: 'RE' }),
          ])
        : compiled.reason;
    };
    expect(read).not.toThrow();
  });
});

describe('RowShaper negative totals', () => {
  it('when an invoice total is negative and negativeIsCreditNote is set, then it is a credit note with positive amounts', () => {
    const made = shapeAll(shaperOf({ negativeIsCreditNote: true }), [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '1.190,00', MwSt: '190,00' }),
      row(3, { ...DOC, Nr: 'R-2', Brutto: '-238,00', MwSt: '-38,00' }),
      row(4, { ...DOC, Nr: 'R-3', Brutto: '(119,00)', MwSt: '(19,00)' }),
    ]);
    expect(made).toEqual([
      { kind: 'invoices', line: 2, sourceId: 'R-1', totalAmount: '1190.00', taxAmount: '190.00' },
      { kind: 'creditNotes', line: 3, sourceId: 'R-2', totalAmount: '238.00', taxAmount: '38.00' },
      { kind: 'creditNotes', line: 4, sourceId: 'R-3', totalAmount: '119.00', taxAmount: '19.00' },
    ]);
  });

  it('when negativeIsCreditNote is not set, then a negative invoice stays an invoice as written', () => {
    const made = shapeAll(shaperOf({}), [row(2, { ...DOC, Nr: 'R-2', Brutto: '-238,00', MwSt: '-38,00' })]);
    expect(made).toEqual([
      { kind: 'invoices', line: 2, sourceId: 'R-2', totalAmount: '-238.00', taxAmount: '-38.00' },
    ]);
  });

  it('when a credit-notes file writes its totals negative, then they are made positive', () => {
    const made = shapeAll(shaperOf({}, 'creditNotes'), [
      row(2, { ...DOC, Nr: 'G-1', Brutto: '-238,00', MwSt: '-38,00' }),
    ]);
    expect(made).toEqual([
      { kind: 'creditNotes', line: 2, sourceId: 'G-1', totalAmount: '238.00', taxAmount: '38.00' },
    ]);
  });
});

describe('RowShaper groups', () => {
  it('when consecutive rows share a sourceId, then they make one document when the next starts and on flush', () => {
    const shaper = shaperOf({ group: { sum: ['taxAmount'] } });
    const first = shaper.take(row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00', MwSt: '0,10' }));
    const second = shaper.take(row(3, { ...DOC, Nr: 'R-1', Brutto: '999,00', MwSt: '0,20' }));
    const third = shaper.take(row(4, { ...DOC, Nr: 'R-2', Brutto: '50,00', MwSt: '1,00' }));
    const last = shaper.flush();
    expect([first, second]).toEqual([[], []]);
    expect(third.map((m) => [m.view.get('sourceId'), m.line, m.rows])).toEqual([['R-1', 2, 2]]);
    // 0.1 + 0.2 is 0.30000000000000004 in floating point: the sum is exact.
    expect(third.map((m) => [m.view.get('taxAmount'), m.view.get('totalAmount')])).toEqual([
      ['0.30', '100.00'],
    ]);
    expect(last.map((m) => [m.view.get('sourceId'), m.view.get('taxAmount'), m.rows])).toEqual([
      ['R-2', '1.00', 1],
    ]);
    expect(shaper.flush()).toEqual([]);
  });

  it('when rows of one sourceId are not consecutive, then each run is its own document', () => {
    const made = shapeAll(shaperOf({ group: { sum: ['taxAmount'] } }), [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '10,00', MwSt: '1,00' }),
      row(3, { ...DOC, Nr: 'R-2', Brutto: '10,00', MwSt: '1,00' }),
      row(4, { ...DOC, Nr: 'R-1', Brutto: '10,00', MwSt: '2,00' }),
    ]);
    expect(made.map((m) => [m.sourceId, m.line, m.taxAmount])).toEqual([
      ['R-1', 2, '1.00'],
      ['R-2', 3, '1.00'],
      ['R-1', 4, '2.00'],
    ]);
  });

  it('when a group sums nothing, then every value comes from its first row', () => {
    const made = shapeAll(shaperOf({ group: { sum: [] } }), [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00', MwSt: '19,00' }),
      row(3, { ...DOC, Nr: 'R-1', Brutto: '200,00', MwSt: '38,00', Fällig: '01.03.2026' }),
    ]);
    expect(made).toEqual([
      { kind: 'invoices', line: 2, sourceId: 'R-1', totalAmount: '100.00', taxAmount: '19.00' },
    ]);
  });

  it('when a summed amount of one row cannot be read, then the document has an issue naming that line', () => {
    const made = shapeAll(shaperOf({ group: { sum: ['taxAmount'] } }), [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '100,00', MwSt: '1,00' }),
      row(3, { ...DOC, Nr: 'R-1', Brutto: '100,00', MwSt: '1x' }),
    ]);
    expect(made.map((m) => m.issues)).toEqual([
      [
        {
          column: 'taxAmount',
          reason: 'line 3: not an amount in the form 1.234,56: "1x" (the document\'s rows are summed)',
        },
      ],
    ]);
  });

  it('when a grouped invoice is negative and negativeIsCreditNote is set, then its sums are made positive', () => {
    const made = shapeAll(
      shaperOf({ group: { sum: ['totalAmount', 'taxAmount'] }, negativeIsCreditNote: true }),
      [
        row(2, { ...DOC, Nr: 'R-9', Brutto: '-100,00', MwSt: '-19,00' }),
        row(3, { ...DOC, Nr: 'R-9', Brutto: '-50,00', MwSt: '-9,50' }),
      ],
    );
    expect(made).toEqual([
      { kind: 'creditNotes', line: 2, sourceId: 'R-9', totalAmount: '150.00', taxAmount: '28.50' },
    ]);
  });
});

describe('RowShaper derived accounts and open amounts', () => {
  it('when documents name their account, then each account comes out once, before its first document', () => {
    const made = shapeAll(shaperOf({ deriveAccounts: true }), [
      row(2, { ...DOC, Nr: 'R-1', Brutto: '10,00', Kunde: 'K-1', Name: 'Café Müller' }),
      row(3, { ...DOC, Nr: 'R-2', Brutto: '20,00', Kunde: 'K-1', Name: 'Café Müller' }),
      row(4, { ...DOC, Nr: 'R-3', Brutto: '30,00', Kunde: 'K-2', Name: 'Zoë AG' }),
    ]);
    expect(made.map((m) => [m.kind, m.sourceId, m.line])).toEqual([
      ['accounts', 'K-1', 2],
      ['invoices', 'R-1', 2],
      ['invoices', 'R-2', 3],
      ['accounts', 'K-2', 4],
      ['invoices', 'R-3', 4],
    ]);
    expect(made.filter((m) => m.kind === 'accounts').map((m) => m.fullName)).toEqual([
      'Café Müller',
      'Zoë AG',
    ]);
  });

  it('when the file gives the open amount, then the paid amount is the total minus it', () => {
    const shaper = shaperOf({});
    const [made] = shaper.take(row(2, { ...DOC, Nr: 'R-1', Brutto: '1.190,00', Offen: '190,00' }));
    expect(made?.view.get('paidAmount')).toBe('1000.00');
  });
});
