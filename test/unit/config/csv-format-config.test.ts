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
