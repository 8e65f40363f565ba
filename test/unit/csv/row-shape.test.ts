import { describe, expect, it } from 'vitest';
import type { Stream } from '../../../src/domain/records.js';
import { kindFormat } from '../../../src/sources/csv/file-format.js';
import { compileShape, hasShape, type ShapeSettings } from '../../../src/sources/csv/row-shape.js';
import { GERMAN_INVOICE_COLUMNS } from '../../support/german-columns.js';

const HEADER = ['Nr', 'Kunde', 'Name', 'Datum', 'Fällig', 'Brutto', 'MwSt', 'Art'];
const INVOICE_COLUMNS = GERMAN_INVOICE_COLUMNS;
const GERMAN = kindFormat(
  { format: { decimalSeparator: ',', thousandsSeparator: '.', dateFormat: 'dd.MM.yyyy' } },
  'invoices',
);
const NOTHING_FOUND = (_kind: Stream) => new Map<string, number>();

const compile = (settings: ShapeSettings, stream: Stream = 'invoices') =>
  compileShape(stream, HEADER, settings, GERMAN, NOTHING_FOUND);

const reasonOf = (result: ReturnType<typeof compile>): string | undefined =>
  result.ok ? undefined : result.reason;

describe('compileShape', () => {
  it('when only columns are set, then the file makes its own kind, with its format', () => {
    const result = compile({ columns: { invoices: INVOICE_COLUMNS } });
    expect(result.ok && Object.keys(result.shape.plans)).toEqual(['invoices']);
    expect(result.ok && result.shape.format.date('12.01.2026')).toEqual({
      ok: true,
      value: { year: 2026, month: 1, day: 12 },
    });
    expect(
      result.ok && [result.shape.negativeIsCreditNote, result.shape.group, result.shape.deriveAccounts],
    ).toEqual([false, null, false]);
  });

  it('when negative invoices are credit notes, then credit notes read like the invoices unless columns.creditNotes says otherwise', () => {
    const result = compile({
      columns: { invoices: INVOICE_COLUMNS, creditNotes: { number: 'Name' } },
      rows: { invoices: { negativeIsCreditNote: true } },
    });
    const credit = result.ok ? result.shape.plans.creditNotes : undefined;
    expect(credit && Object.fromEntries(credit.sources)).toMatchObject({
      number: { from: 'cell', index: 2 },
      sourceId: { from: 'cell', index: 0 },
      totalAmount: { from: 'cell', index: 5 },
    });
  });

  it('when kindFrom lists credit note values, then the file also makes credit notes, by lower-case value', () => {
    const result = compile({
      columns: { invoices: INVOICE_COLUMNS },
      rows: {
        invoices: { kindFrom: { column: 'art', invoices: [' RE '], creditNotes: ['GS', 'Gutschrift'] } },
      },
    });
    expect(result.ok && Object.keys(result.shape.plans).sort()).toEqual(['creditNotes', 'invoices']);
    expect(result.ok && result.shape.kindFrom && Object.fromEntries(result.shape.kindFrom.kinds)).toEqual({
      re: 'invoices',
      gs: 'creditNotes',
      gutschrift: 'creditNotes',
    });
  });

  it('when accounts are derived, then their sourceId is the documents accountSourceId', () => {
    const result = compile({
      columns: { invoices: INVOICE_COLUMNS, accounts: { fullName: 'Name', currencyCode: { value: 'EUR' } } },
      rows: { invoices: { deriveAccounts: true } },
    });
    const accounts = result.ok ? result.shape.plans.accounts : undefined;
    expect(accounts && Object.fromEntries(accounts.sources)).toEqual({
      fullName: { from: 'cell', index: 2 },
      currencyCode: { from: 'value', value: 'EUR' },
      sourceId: { from: 'cell', index: 1 },
    });
  });

  it('when derived accounts miss required columns, then the reason says it is about deriveAccounts', () => {
    expect(
      reasonOf(
        compile({ columns: { invoices: INVOICE_COLUMNS }, rows: { invoices: { deriveAccounts: true } } }),
      ),
    ).toBe(
      'deriveAccounts: missing required columns "fullName", "currencyCode" of accounts: name the headers (or a constant { value: ... }) in columns.accounts',
    );
  });

  it('when a skip rule or kindFrom names a header the file lacks, then the file is refused naming the setting', () => {
    expect(
      reasonOf(
        compile({
          columns: { invoices: INVOICE_COLUMNS },
          rows: { invoices: { skip: [{ column: 'Totals', empty: true }] } },
        }),
      ),
    ).toBe(
      'rows.skip column names the header "Totals", which this file does not have; its headers: Nr, Kunde, Name, Datum, Fällig, Brutto, MwSt, Art',
    );
    expect(
      reasonOf(
        compile({
          columns: { invoices: INVOICE_COLUMNS },
          rows: { invoices: { kindFrom: { column: 'Typ', invoices: ['RE'] } } },
        }),
      ),
    ).toBe(
      'rows.kindFrom.column names the header "Typ", which this file does not have; its headers: Nr, Kunde, Name, Datum, Fällig, Brutto, MwSt, Art',
    );
  });

  it('when the columns of the kind cannot be planned, then that reason is the file refusal', () => {
    expect(reasonOf(compile({ columns: { invoices: { ...INVOICE_COLUMNS, taxAmount: 'Steuer' } } }))).toMatch(
      /^columns\.invoices\.taxAmount names the header "Steuer", which this file does not have/,
    );
  });

  it('when the file holds accounts, then negative totals and derived accounts do not apply', () => {
    const result = compileShape(
      'accounts',
      ['Kunde', 'Name'],
      { columns: { accounts: { sourceId: 'Kunde', fullName: 'Name', currencyCode: { value: 'EUR' } } } },
      kindFormat({}, 'accounts'),
      NOTHING_FOUND,
    );
    expect(result.ok && [Object.keys(result.shape.plans), result.shape.negativeIsCreditNote]).toEqual([
      ['accounts'],
      false,
    ]);
  });
});

describe('hasShape', () => {
  it('when a kind has columns or rows settings, then it has a shape; otherwise it reads as the contract', () => {
    const settings: ShapeSettings = { columns: { invoices: INVOICE_COLUMNS }, rows: { creditNotes: {} } };
    expect([
      hasShape(settings, 'invoices'),
      hasShape(settings, 'creditNotes'),
      hasShape(settings, 'accounts'),
    ]).toEqual([true, true, false]);
  });
});
