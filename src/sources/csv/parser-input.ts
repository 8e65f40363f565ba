import { isAscii } from 'node:buffer';
import { TextDecoder } from 'node:util';
import { readFileChunks } from './file-chunks.js';
import type { FileEncoding } from './file-format.js';

/**
 * A file's bytes as csv-parse is given them: UTF-8 as they are (csv-parse decodes them itself,
 * BOM included), any other encoding decoded to text first (`TextDecoder`, with a character cut
 * between two chunks held back). What csv-parse reads is the same whichever way a chunk goes.
 */
export interface ParserInput {
  /** The next chunk of the file's bytes, as csv-parse should read it. */
  next(bytes: Buffer): Buffer | string;
  /** What a decoder held back at the end of the file ('' when nothing). */
  end(): string;
}

/** The input for a file's encoding. */
export function parserInput(encoding: FileEncoding = 'utf-8'): ParserInput {
  if (encoding === 'utf-8') return { next: (bytes) => bytes, end: () => '' };
  if (encoding === 'windows-1252' || encoding === 'iso-8859-1') return new Windows1252Input();
  const decoder = new TextDecoder(encoding, { ignoreBOM: false });
  return { next: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() };
}

export interface ParserBytesOptions {
  encoding?: FileEncoding | undefined;
  /** Bytes read from the file at a time. */
  chunkSize: number;
  /** Bytes of the file taken at a time out of a read (decoded, for an encoding other than UTF-8). */
  sliceSize: number;
  /** Where to start, counted in the bytes csv-parse is given (default 0, the file's start). */
  from?: number;
}

/**
 * The bytes csv-parse is given for a file, slice by slice, from `from` on: what a reader that
 * stopped can go on from. For UTF-8 they are the file's own bytes, read from that offset; for
 * another encoding the file is decoded again from its start, its first `from` bytes of UTF-8 left
 * out (only done to go on after a record too long to read, rare enough for the second read).
 * The UTF-8 slices are views of reused buffers: each is valid until two more were taken, time
 * enough for csv-parse to copy an unfinished record's bytes. Stop iterating at any time: the file
 * is closed.
 */
export async function* parserBytes(path: string, options: ParserBytesOptions): AsyncGenerator<Buffer> {
  const { encoding = 'utf-8', chunkSize, sliceSize, from = 0 } = options;
  const input = parserInput(encoding);
  const utf8 = encoding === 'utf-8';
  let skip = utf8 ? 0 : from;
  const taken = (bytes: Buffer): Buffer | null => {
    if (skip >= bytes.length) {
      skip -= bytes.length;
      return null;
    }
    const rest = skip > 0 ? bytes.subarray(skip) : bytes;
    skip = 0;
    return rest;
  };
  const chunks = readFileChunks(path, {
    chunkSize,
    buffers: 2,
    ...(utf8 && from > 0 ? { start: from } : {}),
  });
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.length; at += sliceSize) {
      const bytes = taken(asBytes(input.next(chunk.subarray(at, at + sliceSize))));
      if (bytes !== null) yield bytes;
    }
  }
  const rest = taken(asBytes(input.end()));
  if (rest !== null) yield rest;
}

/** Text as csv-parse would take it written to its stream: UTF-8 bytes. */
const asBytes = (data: Buffer | string): Buffer =>
  typeof data === 'string' ? Buffer.from(data, 'utf8') : data;

/**
 * Windows-1252 (which the WHATWG encoding standard, and so `TextDecoder`, also reads
 * `iso-8859-1` as) given to csv-parse as the UTF-8 bytes the decoded text encodes to, as a string
 * written to it would be, without making that text first. Windows-1252 reads every byte as
 * Latin-1 does except 0x80-0x9F (`€`, `„`, `…`...): a chunk of ASCII bytes goes as it is, any
 * other as its Latin-1 text in UTF-8 (one native pass each way), unless that holds one of
 * U+0080-U+009F, the only characters where the two differ. Then the chunk, and the rest of the
 * file, go through `TextDecoder` (a file that holds one such byte likely holds more).
 *
 * On a German ERP's export of a million rows, what decoding costs went from about 195 to 75 ms
 * (Node 24: its Windows-1252 decoder maps each chunk through a 16-bit copy in JavaScript, and the
 * text it makes is then encoded to UTF-8 again for csv-parse).
 */
class Windows1252Input implements ParserInput {
  #decoder: TextDecoder | null = null;

  next(bytes: Buffer): Buffer | string {
    if (this.#decoder === null) {
      if (isAscii(bytes)) return bytes;
      const utf8 = Buffer.from(bytes.toString('latin1'), 'utf8');
      if (!holdsC1Controls(utf8)) return utf8;
      this.#decoder = new TextDecoder('windows-1252');
    }
    return this.#decoder.decode(bytes, { stream: true });
  }

  end(): string {
    return this.#decoder?.decode() ?? '';
  }
}

/**
 * Whether UTF-8 bytes made from Latin-1 text hold a character U+0080-U+009F (C2 80 to C2 9F),
 * which Windows-1252 reads as another character. `é` and the like are C3 xx, `§` `°` or a
 * no-break space C2 A0 to C2 BF: a C2 is looked at, and most chunks hold none.
 */
function holdsC1Controls(utf8: Buffer): boolean {
  for (let at = utf8.indexOf(0xc2); at !== -1; at = utf8.indexOf(0xc2, at + 1)) {
    if (utf8[at + 1]! < 0xa0) return true;
  }
  return false;
}
