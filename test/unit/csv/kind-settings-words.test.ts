import { describe, expect, it } from 'vitest';
import { sourceSchema } from '../../../src/config/schema.js';
import type { CsvSourceConfig } from '../../../src/sources/csv/csv-source.js';
import { columnSourceWords, kindFacts, kindLines } from '../../../src/sources/csv/kind-settings.js';

const sage = sourceSchema.parse({
  id: 'sage',
  type: 'csv',
  dropDir: './drop',
  files: { accounts: 'CUSTOMERS*.CSV', invoices: 'AUDIT*.CSV' },
  format: { encoding: 'windows-1252', dateFormat: 'dd/MM/yyyy', headerLine: 'none' },
  columns: {
    accounts: { sourceId: 'A', fullName: 2, currencyCode: { header: 'AQ', map: { '1': 'GBP' } } },
    invoices: {
      totalAmount: { sum: ['H', 'J'] },
      dueDate: { date: 'E', plusDays: { accountColumn: 'AD' } },
      issuedDate: { date: 'E', plusDays: 0 },
    },
  },
}) as CsvSourceConfig;

describe("what doctor and the dashboard say of a source's columns", () => {
  it('when columns are by letter or number, summed, or a date plus days, then each reads in a few words', () => {
    expect(
      [
        'A',
        2,
        ['C', 'D'],
        { header: 'AQ', map: {} },
        { sum: ['H', 'J'] },
        { date: 'E', plusDays: 30 },
        { date: 'E', plusDays: { accountColumn: 'AD' } },
      ].map((source) => columnSourceWords(source as Parameters<typeof columnSourceWords>[0])),
    ).toEqual([
      'A',
      'column 2',
      'C + D',
      'AQ (values mapped)',
      'sum of H, J',
      'E plus 30 days',
      "E plus the days in the account's AD (accounts file)",
    ]);
  });

  it('when the files have no header, then their format says so, and the columns fact lists the computed ones', () => {
    expect(kindLines(sage)[0]).toBe(
      'accounts "CUSTOMERS*.CSV": windows-1252, delimiter ",", decimal ".", thousands none, dates dd/MM/yyyy, no header (columns by letter: A, B, ...); columns set',
    );
    const columns = kindFacts(sage).find((fact) => fact.label === 'Columns');
    expect(JSON.stringify(columns)).toContain(
      "totalAmount <- sum of H, J\\ndueDate <- E plus the days in the account's AD (accounts file)",
    );
  });
});
