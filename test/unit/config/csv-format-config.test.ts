import { describe, expect, it } from 'vitest';
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
