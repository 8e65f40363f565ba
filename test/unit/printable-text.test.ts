import { describe, expect, it } from 'vitest';
import { progressText } from '../../src/cli/progress-text.js';
import { prettyLine } from '../../src/logging/pretty-line.js';
import { printable } from '../../src/logging/printable-text.js';

/**
 * Names and reasons come from the data: printed as they are, a line break forges a line and an
 * ESC sequence drives the terminal. Every place a person reads them gets them escaped.
 */
describe('text made printable', () => {
  it('when text holds no control character, then it is the same string', () => {
    const text = 'invoices-2026 (copie) é€.csv';
    expect(printable(text)).toBe(text);
  });

  it('when text holds line breaks, ESC and C1 sequences, bidi overrides or DEL, then each is an escape and the rest is kept', () => {
    expect(printable('a\nb\r\tc')).toBe('a\\nb\\r\\tc');
    expect(printable('\u001b[2J\u001b]0;title\u0007')).toBe('\\x1b[2J\\x1b]0;title\\x07');
    expect(printable('x\u009b31my\u007f')).toBe('x\\x9b31my\\x7f');
    expect(printable('invoice\u202Efdp.csv')).toBe('invoice\\u202efdp.csv');
    expect(printable('a\u2028b')).toBe('a\\u2028b');
  });

  it('when a log entry names such a file, then its readable line is one line with the name escaped, in every field', () => {
    const line = prettyLine({
      level: 40,
      time: 0,
      msg: 'file rejected',
      file: 'invoices\n\u001b[31m.csv',
      reason: 'bad\nheader',
      rejectedPath: '/drop/rejected/x\u001b[0m',
    });
    expect(line).toContain('invoices\\n\\x1b[31m.csv: bad\\nheader');
    expect(line).toContain('rejectedPath=/drop/rejected/x\\x1b[0m');
    // Nothing left for `printable` to escape: no raw control character.
    expect(printable(line)).toBe(line);
  });

  it('when the progress line shows such a file, then the name is escaped', () => {
    const text = progressText({ unit: 'invoices\r\u001b[2K.csv', read: 1, done: 0, failed: 0, waitedMs: 0 });
    expect(text).toBe('invoices\\r\\x1b[2K.csv: 1 rows read, 0 done, 0 failed');
  });
});
