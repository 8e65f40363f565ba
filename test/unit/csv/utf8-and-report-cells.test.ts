import { describe, expect, it } from 'vitest';
import { csvCell } from '../../../src/sources/csv/error-report.js';
import { firstInvalidUtf8, incompleteTailLength } from '../../../src/sources/csv/file-inspection.js';

describe('UTF-8 chunk boundaries', () => {
  const euro = Buffer.from('€'); // e2 82 ac

  it('when a chunk ends inside a character, then the incomplete tail is held back', () => {
    expect(incompleteTailLength(Buffer.from('abc'))).toBe(0);
    expect(incompleteTailLength(Buffer.concat([Buffer.from('a'), euro.subarray(0, 1)]))).toBe(1);
    expect(incompleteTailLength(Buffer.concat([Buffer.from('a'), euro.subarray(0, 2)]))).toBe(2);
    expect(incompleteTailLength(Buffer.concat([Buffer.from('a'), euro]))).toBe(0);
    expect(incompleteTailLength(Buffer.from('😀').subarray(0, 3))).toBe(3);
  });

  it('when bytes are not UTF-8, then the first bad byte is located', () => {
    expect(firstInvalidUtf8(Buffer.from([0x61, 0x62, 0xff, 0x63]))).toBe(2);
    expect(firstInvalidUtf8(Buffer.concat([euro, Buffer.from([0xe9, 0x74, 0xe9])]))).toBe(3); // latin-1 "été"
  });
});

describe('csvCell', () => {
  it('when a value holds a comma, a quote, a line break or edge spaces, then it is quoted RFC 4180 style', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('12,50')).toBe('"12,50"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell(' padded')).toBe('" padded"');
    expect(csvCell('')).toBe('');
  });
});
