import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CSV_PARSE_OPTIONS } from '../../../src/sources/csv/csv-rows.js';
import {
  FIELD_PREFIX,
  OversizedRecordScan,
  type OversizedRecordScanProps,
} from '../../../src/sources/csv/oversized-record.js';

/**
 * The scan that finds where a record too long for csv-parse ends: by csv-parse's rules (quotes,
 * doubled quotes, the record delimiter it settled on, blank lines), whatever way the bytes are cut.
 */

const props = (over: Partial<OversizedRecordScanProps> = {}): OversizedRecordScanProps => ({
  delimiter: ',',
  recordDelimiter: null,
  line: 1,
  atFileStart: false,
  ...over,
});

/** Scans `text` in slices of `size` bytes: where the record ends (an offset in the text), or null. */
function endIn(text: string, size: number, over: Partial<OversizedRecordScanProps> = {}) {
  const scan = new OversizedRecordScan(props(over));
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += size) {
    const end = scan.scan(bytes.subarray(at, at + size));
    if (end >= 0) return { end: at + end, scan };
    if (scan.broken !== null) return { end: null, scan };
  }
  return { end: scan.finish() ? bytes.length : null, scan };
}

describe('OversizedRecordScan', () => {
  it('when the bytes come one at a time or all at once, then the record ends at the same place, on the same line', () => {
    const text = '\r\n\r\n"a ""quoted"" value\r\nover lines",b,"c"\r\nnext,row\r\n';
    const whole = endIn(text, text.length, { line: 3 });
    expect(whole.end).toBe(text.indexOf('next'));
    expect(whole.scan.row().line).toBe(5);
    expect(whole.scan.nextLine).toBe(7);
    expect(whole.scan.recordDelimiter).toBe('\r\n');
    expect(whole.scan.row().fields).toEqual(['a "quoted" value\r\nover lines', 'b', 'c']);
    for (const size of [1, 2, 3, 7]) {
      const sliced = endIn(text, size, { line: 3 });
      expect(sliced.end).toBe(whole.end);
      expect(sliced.scan.nextLine).toBe(7);
      expect(sliced.scan.row()).toEqual(whole.scan.row());
    }
  });

  it('when the record delimiter is settled, then only it ends the record (a lone LF in a CRLF file is text)', () => {
    const crlf = endIn('a\nb,c\r\nnext', 64, { recordDelimiter: '\r\n' });
    expect(crlf.end).toBe('a\nb,c\r\n'.length);
    expect(crlf.scan.row().fields).toEqual(['a\nb', 'c']);
    expect(crlf.scan.nextLine).toBe(3);
    const lf = endIn('a,b\r\nnext', 64, { recordDelimiter: '\n' });
    expect(lf.scan.row().fields).toEqual(['a', 'b\r']);
    expect(lf.scan.nextLine).toBe(2);
  });

  it('when the first line break met is a lone CR, then it ends the record and is the record delimiter', () => {
    for (const size of [1, 64]) {
      const { end, scan } = endIn('a,b\rnext\r', size);
      expect(end).toBe(4);
      expect(scan.recordDelimiter).toBe('\r');
      expect(scan.nextLine).toBe(2);
    }
  });

  it('when a field is longer than what is kept of it, then it is cut on a character with "…", and counted in characters', () => {
    const value = 'é'.repeat(FIELD_PREFIX);
    const { scan } = endIn(`id-1,"${value}"\n`, 100);
    const { fields, oversized } = scan.row();
    expect(fields[0]).toBe('id-1');
    expect(fields[1]).toBe(`${'é'.repeat(FIELD_PREFIX / 2)}…`);
    expect(oversized).toEqual({
      chars: 4 + FIELD_PREFIX,
      longest: { index: 1, chars: FIELD_PREFIX },
      cut: [1],
    });
  });

  it('when the file starts with a BOM at the scan start, then it is not part of the first field', () => {
    const { scan } = endIn('\uFEFFx,y\n', 64, { atFileStart: true });
    expect(scan.row().fields).toEqual(['x', 'y']);
  });

  it('when a quote is never closed, or text follows a closing quote, or a quote sits inside an unquoted value, then the record has no end', () => {
    expect(endIn('a,"open\nb,c\n', 4).end).toBeNull();
    const after = endIn('a,"closed"x\nb\n', 4);
    expect(after.end).toBeNull();
    expect(after.scan.broken).toContain('after a closing quote');
    expect(endIn('a,b"c\nd\n', 4).scan.broken).toContain('inside an unquoted value');
  });

  it('when random texts of quotes, delimiters and line breaks are scanned, then the first record ends where csv-parse ends it, with its fields', () => {
    let state = 11;
    const next = (n: number) => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state % n;
    };
    const alphabet = ['a', 'b', ',', '"', '""', '\r', '\n', '\r\n'];
    let compared = 0;
    let refused = 0;
    for (let round = 0; round < 5000; round++) {
      const text = Array.from({ length: 2 + next(12) }, () => alphabet[next(alphabet.length)]).join('');
      let first: { fields: string[]; bytes: number } | null = null;
      try {
        const records = parse(text, { ...CSV_PARSE_OPTIONS, info: true, to: 1 }) as unknown as Array<{
          record: string[];
          info: { bytes: number };
        }>;
        if (records[0] !== undefined) first = { fields: records[0].record, bytes: records[0].info.bytes };
      } catch {
        // csv-parse refuses the first record (it stops after it): it has no end a reader can trust.
        expect(endIn(text, 1 + next(4)).end, JSON.stringify(text)).toBeNull();
        refused++;
        continue;
      }
      const { end, scan } = endIn(text, 1 + next(4));
      if (first === null) {
        expect(end, JSON.stringify(text)).toBeNull();
        continue;
      }
      expect(end, JSON.stringify(text)).toBe(first.bytes);
      expect(scan.row().fields, JSON.stringify(text)).toEqual(first.fields);
      compared++;
    }
    expect(compared).toBeGreaterThan(1000);
    expect(refused).toBeGreaterThan(1000);
  });
});
