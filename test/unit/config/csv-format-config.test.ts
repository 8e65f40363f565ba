import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { sourceSchema } from '../../../src/config/schema.js';

const csvSource = (format: Record<string, unknown>) =>
  sourceSchema.safeParse({ id: 'erp', type: 'csv', dropDir: './drop', format });

describe('the format of a CSV source', () => {
  it('when a date pattern writes the day or the year in capitals (DD.MM.YYYY), then it is refused with the tokens to use', () => {
    const result = csvSource({ dateFormat: 'DD.MM.YYYY' });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toMatch(/write the day as dd and the year as yyyy/);
    expect(csvSource({ dateFormat: "dd.MM.yyyy 'Day'" }).success).toBe(true);
  });

  it('when encodings and delimiters are written as people write them, then they are read (cp1252, latin1, tab)', () => {
    const result = csvSource({ encoding: 'CP1252', delimiter: 'tab' });
    expect(result.success && result.data.type === 'csv' && result.data.format).toEqual({
      encoding: 'windows-1252',
      delimiter: '\t',
    });
    expect(csvSource({ encoding: 'ebcdic' }).success).toBe(false);
  });
});

describe('the columns of a file without a header, and values computed within a row', () => {
  const source = (settings: Record<string, unknown>) =>
    sourceSchema.safeParse({ id: 'sage', type: 'csv', dropDir: './drop', ...settings });
  const messages = (settings: Record<string, unknown>) => {
    const result = source(settings);
    return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('when headerLine is none or a line number, then it is read; anything else is refused saying both forms', () => {
    expect(source({ format: { headerLine: 'none' } }).success).toBe(true);
    expect(source({ formats: { accounts: { headerLine: 3 } } }).success).toBe(true);
    expect(messages({ format: { headerLine: 'no' } })).toEqual([
      'format.headerLine: a line number (1 or more), or none (the file has no header: its columns are named A, B, ...)',
    ]);
  });

  it('when columns are named by letter or number, summed, or a date plus days, then the configuration is read', () => {
    const result = source({
      format: { headerLine: 'none' },
      columns: {
        accounts: { sourceId: 'A', fullName: 2, currencyCode: { header: 'AQ', map: { '1': 'GBP' } } },
        invoices: {
          totalAmount: { sum: ['H', 10] },
          dueDate: { date: 'E', plusDays: { accountColumn: 'AD' } },
          issuedDate: { date: 'E', plusDays: 0 },
        },
      },
      rows: { invoices: { kindFrom: { column: 1, invoices: 'SI' }, skip: [{ column: 'A', equals: 'BP' }] } },
    });
    expect(result.success).toBe(true);
  });

  it('when a sum is given to a column that is no amount, or days to one that is no date, then each is refused', () => {
    expect(
      messages({
        columns: {
          invoices: { number: { sum: ['F', 'G'] }, taxAmount: { date: 'E', plusDays: 30 } },
        },
      }),
    ).toEqual([
      'columns.invoices.number.sum: adds up amounts: number is not one (totalAmount, taxAmount, paidAmount, openAmount)',
      'columns.invoices.taxAmount.plusDays: makes a date: taxAmount is not one (issuedDate, dueDate)',
    ]);
  });

  it('when the days are negative or a column number is 0, then they are refused', () => {
    expect(source({ columns: { invoices: { dueDate: { date: 'E', plusDays: -1 } } } }).success).toBe(false);
    expect(source({ columns: { invoices: { sourceId: 0 } } }).success).toBe(false);
  });
});

describe('a misspelt key inside a source', () => {
  it('when a nested key of a source is misspelt, then the error suggests the key it resembles', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rs-config-'));
    try {
      const file = join(dir, 'receivables-sync.yaml');
      writeFileSync(
        file,
        'sources:\n  - id: erp\n    type: csv\n    dropDir: ./drop\n    format: { delimeter: ";" }\n    rows: { invoices: { negativeIsCreditnote: true } }\n',
      );
      expect(() => loadConfig({ file, env: {} })).toThrow(
        /sources\.0\.format: unknown key "delimeter" \(did you mean "delimiter"\?\) \(in source "erp"\)[\s\S]*sources\.0\.rows\.invoices: unknown key "negativeIsCreditnote" \(did you mean "negativeIsCreditNote"\?\)/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
