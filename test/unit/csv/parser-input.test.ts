import { TextDecoder } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parserInput } from '../../../src/sources/csv/parser-input.js';

/** What csv-parse receives for `chunks` through the input, as UTF-8 bytes. */
function fed(encoding: 'windows-1252' | 'iso-8859-1', chunks: Buffer[]): Buffer {
  const input = parserInput(encoding);
  const parts = chunks.map((chunk) => {
    const out = input.next(chunk);
    return typeof out === 'string' ? Buffer.from(out, 'utf8') : Buffer.from(out);
  });
  parts.push(Buffer.from(input.end(), 'utf8'));
  return Buffer.concat(parts);
}

/** The reference: the whole file through `TextDecoder`, encoded to UTF-8. */
const decoded = (bytes: Buffer) => Buffer.from(new TextDecoder('windows-1252').decode(bytes), 'utf8');

/** A small deterministic generator, so a failure can be replayed. */
function bytesOf(seed: number, length: number, alphabet: number[]): Buffer {
  let x = seed;
  return Buffer.from(
    Array.from({ length }, () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return alphabet[x % alphabet.length]!;
    }),
  );
}

// Windows-1252 files (a German ERP's export: `Müller GmbH;1.234,56 €`) skip the text decoder while
// their bytes read as Latin-1 does; csv-parse must receive exactly what the decoder would give.
describe('the Windows-1252 input given to csv-parse', () => {
  it('gives every byte value as TextDecoder reads it (0x80-0x9F included: €, „, …)', () => {
    const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    for (const encoding of ['windows-1252', 'iso-8859-1'] as const) {
      expect(fed(encoding, [all]).equals(decoded(all))).toBe(true);
      expect(
        fed(
          encoding,
          [...all].map((b) => Buffer.from([b])),
        ).equals(decoded(all)),
      ).toBe(true);
    }
    expect(fed('windows-1252', [Buffer.from([0x80])]).toString('utf8')).toBe('€');
  });

  it('gives the same bytes for files cut into random chunks, ASCII, Latin-1 and 0x80-0x9F alike', () => {
    const ascii = Array.from({ length: 95 }, (_, i) => 32 + i).concat([10, 13, 59]);
    const latin1 = ascii.concat([0xa0, 0xa7, 0xb0, 0xc4, 0xd6, 0xdc, 0xdf, 0xe4, 0xe9, 0xf6, 0xfc]);
    const all = Array.from({ length: 256 }, (_, i) => i);
    for (const [seed, alphabet] of [
      [1, ascii],
      [2, latin1],
      [3, all],
      [4, latin1],
    ] as const) {
      const file = bytesOf(seed, 20_000, alphabet);
      // A `€` late in a Latin-1 file: the chunks before it skipped the decoder, the rest use it.
      if (seed === 4) file[15_000] = 0x80;
      const chunks: Buffer[] = [];
      for (let at = 0, n = seed; at < file.length; n++) {
        const size = 1 + ((n * 7919) % 3000);
        chunks.push(file.subarray(at, at + size));
        at += size;
      }
      expect(fed('windows-1252', chunks).equals(decoded(file)), `seed ${seed}`).toBe(true);
    }
  });

  it('passes an ASCII chunk on as it is (no copy), and a Latin-1 one as UTF-8', () => {
    const input = parserInput('windows-1252');
    const ascii = Buffer.from('Kunde;Betrag\n', 'latin1');
    expect(input.next(ascii)).toBe(ascii);
    expect(Buffer.from(input.next(Buffer.from('Müller;1,5\n', 'latin1')) as Buffer).toString('utf8')).toBe(
      'Müller;1,5\n',
    );
    expect(input.end()).toBe('');
  });
});
