import { describe, expect, it } from 'vitest';
import { trimmed } from '../../../src/sources/csv/row-fields.js';

describe('trimmed', () => {
  it('when a value has or lacks surrounding white space of any kind, then it equals trim()', () => {
    const values = [
      '',
      ' ',
      'a',
      ' a',
      'a ',
      '\ta\r\n',
      '\u00a0a',
      'a\u00a0',
      '\ufeffa',
      'a\u2003',
      'é',
      ' é ',
      'x y',
      '~',
      '!a!',
    ];
    for (const value of values) expect(trimmed(value), JSON.stringify(value)).toBe(value.trim());
  });
});
