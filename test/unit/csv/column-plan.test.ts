import { describe, expect, it } from 'vitest';
import { type ColumnSource, type PlanResult, planColumns } from '../../../src/sources/csv/column-plan.js';

const HEADER = [
  'Rechnungsnummer',
  'Kunde',
  'Datum',
  'Fällig',
  'Brutto',
  'MwSt',
  'Straße',
  'Hausnummer',
  'Land',
];
const NONE = new Map<string, number>();

/** Every column the invoices of HEADER need, by header name. */
const INVOICE_COLUMNS = {
  sourceId: 'Rechnungsnummer',
  number: 'Rechnungsnummer',
  accountSourceId: 'Kunde',
  issuedDate: 'Datum',
  dueDate: 'Fällig',
  totalAmount: 'Brutto',
  taxAmount: 'MwSt',
};

const sourcesOf = (result: PlanResult): Record<string, ColumnSource> | string =>
  result.ok ? Object.fromEntries(result.plan.sources) : result.reason;

describe('planColumns', () => {
  it('when columns name headers exactly or in another case, then each column reads its header', () => {
    const result = planColumns(
      'invoices',
      HEADER,
      { ...INVOICE_COLUMNS, accountSourceId: 'KUNDE', issuedDate: 'datum' },
      NONE,
    );
    expect(sourcesOf(result)).toEqual({
      sourceId: { from: 'cell', index: 0 },
      number: { from: 'cell', index: 0 },
      accountSourceId: { from: 'cell', index: 1 },
      issuedDate: { from: 'cell', index: 2 },
      dueDate: { from: 'cell', index: 3 },
      totalAmount: { from: 'cell', index: 4 },
      taxAmount: { from: 'cell', index: 5 },
    });
  });

  it('when a header is written in two cases, then the exact one is taken before the case-insensitive one', () => {
    const result = planColumns(
      'accounts',
      ['id', 'ID', 'name'],
      { sourceId: 'ID', fullName: 'NAME', currencyCode: { value: 'EUR' } },
      NONE,
    );
    expect(sourcesOf(result)).toMatchObject({ sourceId: { from: 'cell', index: 1 }, fullName: { index: 2 } });
  });

  it('when a column lists several headers, then it joins their cells', () => {
    const result = planColumns(
      'invoices',
      HEADER,
      { ...INVOICE_COLUMNS, 'billingAddress.street': ['Straße', 'Hausnummer'] },
      NONE,
    );
    expect(sourcesOf(result)).toMatchObject({ 'billingAddress.street': { from: 'cells', indexes: [6, 7] } });
  });

  it('when a column is a constant, then it needs no header', () => {
    const result = planColumns('invoices', HEADER, { ...INVOICE_COLUMNS, taxAmount: { value: '0' } }, NONE);
    expect(sourcesOf(result)).toMatchObject({ taxAmount: { from: 'value', value: '0' } });
  });

  it('when a column translates a header values, then the map is keyed by the trimmed lower-case value', () => {
    const result = planColumns(
      'invoices',
      HEADER,
      { ...INVOICE_COLUMNS, 'billingAddress.country': { header: 'Land', map: { ' Deutschland ': 'DE' } } },
      NONE,
    );
    const source = result.ok ? result.plan.sources.get('billingAddress.country') : undefined;
    expect(source?.from === 'map' && [source.index, Object.fromEntries(source.map)]).toEqual([
      8,
      { deutschland: 'DE' },
    ]);
  });

  it('when a column takes the first of several headers with a value, then it lists them in order', () => {
    const result = planColumns(
      'invoices',
      HEADER,
      { ...INVOICE_COLUMNS, dueDate: { first: ['Fällig', 'Datum'] } },
      NONE,
    );
    expect(sourcesOf(result)).toMatchObject({ dueDate: { from: 'first', indexes: [3, 2] } });
  });

  it('when a configured header is missing, then the reason names the key, the nearest header and the headers', () => {
    expect(sourcesOf(planColumns('invoices', HEADER, { sourceId: 'Rechnungsnumer' }, NONE))).toBe(
      'columns.invoices.sourceId names the header "Rechnungsnumer", which this file does not have (did you mean "Rechnungsnummer"?); its headers: Rechnungsnummer, Kunde, Datum, Fällig, Brutto, MwSt, Straße, Hausnummer, Land',
    );
  });

  it('when a missing configured header is like none of the file, then the reason has no guess', () => {
    expect(
      sourcesOf(planColumns('invoices', ['Nr', '', 'Total'], { sourceId: 'Invoice number' }, NONE)),
    ).toBe(
      'columns.invoices.sourceId names the header "Invoice number", which this file does not have; its headers: Nr, Total',
    );
  });

  it('when one header of a list is missing, then that header is the one named', () => {
    const result = planColumns('invoices', HEADER, { 'billingAddress.street': ['Straße', 'Hausnr'] }, NONE);
    expect(sourcesOf(result)).toMatch(
      /^columns\.invoices\.billingAddress\.street names the header "Hausnr",/,
    );
  });

  it('when required columns have no source, then the reason lists them and says where to name them', () => {
    const { taxAmount: _, dueDate: __, ...most } = INVOICE_COLUMNS;
    expect(sourcesOf(planColumns('invoices', HEADER, most, NONE))).toBe(
      'missing required columns "dueDate", "taxAmount" of invoices: name the headers (or a constant { value: ... }) in columns.invoices',
    );
    const { taxAmount: ___, ...allButTax } = INVOICE_COLUMNS;
    expect(sourcesOf(planColumns('invoices', HEADER, allButTax, NONE))).toBe(
      'missing required column "taxAmount" of invoices: name the header (or a constant { value: ... }) in columns.invoices',
    );
  });

  it('when the contract names or mapping found a column, then it is used unless columns names it', () => {
    const found = new Map([
      ['sourceId', 0],
      ['taxAmount', 5],
    ]);
    const result = planColumns('invoices', HEADER, { ...INVOICE_COLUMNS, taxAmount: { value: '0' } }, found);
    expect(sourcesOf(result)).toMatchObject({
      sourceId: { from: 'cell', index: 0 },
      taxAmount: { from: 'value', value: '0' },
    });
  });

  it('when a column has no source of its own, then the fallback gives it, after the configured and found ones', () => {
    const fallback = new Map<string, ColumnSource>([
      ['sourceId', { from: 'cell', index: 1 }],
      ['fullName', { from: 'cell', index: 2 }],
      ['currencyCode', { from: 'value', value: 'USD' }],
    ]);
    const result = planColumns(
      'accounts',
      ['Customer', 'Customer ID', 'Name'],
      { currencyCode: { value: 'EUR' } },
      new Map([['fullName', 0]]),
      fallback,
    );
    expect(sourcesOf(result)).toEqual({
      currencyCode: { from: 'value', value: 'EUR' },
      fullName: { from: 'cell', index: 0 },
      sourceId: { from: 'cell', index: 1 },
    });
  });
});
