import { isUtf8 } from 'node:buffer';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFileChunks } from './file-chunks.js';
import { bomEncoding, type FileEncoding } from './file-format.js';

/**
 * One streaming read of a claimed file before any row is used: its sha256 (to recognise the same
 * content dropped twice) and whether it is valid UTF-8. Both must be known before the first row
 * reaches the API, so they cannot wait for the parse; the read is cheap next to parsing.
 */
export interface FileInspection {
  /** Hex sha256 of the whole file. */
  checksum: string;
  size: number;
  /** Lines, the last one counted even without a final line break (a quoted line break counts too). */
  lines: number;
  /** Where the first byte that is not UTF-8 sits, or null when the file is valid UTF-8. */
  invalidUtf8: { offset: number; line: number } | null;
  /** The encoding the file's byte order mark says, or null without one. */
  bom: FileEncoding | null;
  /**
   * Whether the file holds the bytes of `Ã`, `Â` or `â` in UTF-8 (`utf8`) or in a single-byte
   * encoding (`singleByte`): text encoded twice holds them, so without them no row needs a look.
   */
  mayBeEncodedTwice: { utf8: boolean; singleByte: boolean };
}

/** Bytes read at a time (into one reused buffer, see `readFileChunks`). */
const CHUNK = 1 << 18;

export async function inspectFile(path: string): Promise<FileInspection> {
  const hash = createHash('sha256');
  let size = 0;
  let carry: Buffer = Buffer.alloc(0);
  let invalidOffset: number | null = null;
  let lines = 0;
  let last = 10;
  let bom: FileEncoding | null = null;
  const twice = { utf8: false, singleByte: false };
  let lastByte = -1;
  for await (const chunk of readFileChunks(path, { chunkSize: CHUNK })) {
    if (size === 0) bom = bomEncoding(chunk);
    if (!twice.utf8) twice.utf8 = holdsUtf8Lead(chunk, lastByte);
    if (!twice.singleByte) twice.singleByte = SINGLE_BYTE_LEADS.some((byte) => chunk.indexOf(byte) !== -1);
    // `chunk` is reused by the next read: the hash copies it, `carry` below is a copy.
    hash.update(chunk);
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
    if (chunk.length > 0) last = chunk[chunk.length - 1]!;
    if (invalidOffset === null) {
      // A character may straddle two chunks: hold back an incomplete trailing sequence.
      const data = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const cut = data.length - incompleteTailLength(data);
      const complete = data.subarray(0, cut);
      if (!isUtf8(complete)) invalidOffset = size - carry.length + firstInvalidUtf8(complete);
      carry = Buffer.from(data.subarray(cut));
    }
    size += chunk.length;
    if (chunk.length > 0) lastByte = chunk[chunk.length - 1]!;
  }
  if (invalidOffset === null && carry.length > 0) invalidOffset = size - carry.length;
  return {
    checksum: hash.digest('hex'),
    size,
    lines: last === 10 ? lines : lines + 1,
    bom,
    mayBeEncodedTwice: twice,
    invalidUtf8:
      invalidOffset === null ? null : { offset: invalidOffset, line: await lineAt(path, invalidOffset) },
  };
}

/** `Ã`, `Â`, `â` in UTF-8: C3 83, C3 82, C3 A2. */
const UTF8_LEADS = [Buffer.from([0xc3, 0x83]), Buffer.from([0xc3, 0x82]), Buffer.from([0xc3, 0xa2])];
/** The same in Windows-1252 and ISO-8859-1/15: one byte each. */
const SINGLE_BYTE_LEADS = [0xc3, 0xc2, 0xe2];

/** Whether `chunk` holds one of UTF8_LEADS, one cut by the chunk's start included. */
function holdsUtf8Lead(chunk: Buffer, previousByte: number): boolean {
  if (previousByte === 0xc3 && (chunk[0] === 0x83 || chunk[0] === 0x82 || chunk[0] === 0xa2)) return true;
  return UTF8_LEADS.some((pair) => chunk.indexOf(pair) !== -1);
}

/** The length of a trailing, not yet complete UTF-8 sequence (0 to 3 bytes). */
export function incompleteTailLength(data: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, data.length); back++) {
    const byte = data[data.length - back]!;
    if (byte < 0x80) return 0;
    if (byte >= 0xc0) return back < sequenceLength(byte) ? back : 0;
  }
  return 0;
}

const sequenceLength = (lead: number): number => (lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2);

/** Index of the first byte that breaks UTF-8 (only called once `isUtf8` said there is one). */
export function firstInvalidUtf8(data: Uint8Array): number {
  // Bisect on prefixes: with `stream: true` a prefix cut inside a valid character is not an error,
  // so "this prefix holds an invalid sequence" only turns true once, at the first bad byte.
  let low = 0;
  let high = data.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(0, mid + 1), { stream: true });
      low = mid + 1;
    } catch {
      high = mid;
    }
  }
  // The decoder fails on the byte that breaks a sequence; the sequence starts at its lead byte.
  for (let back = 1; back <= 3 && low - back >= 0; back++) {
    const byte = data[low - back]!;
    if (byte >= 0xc0) return back < sequenceLength(byte) ? low - back : low;
    if (byte < 0x80) break;
  }
  return low;
}

/** The 1-based line of byte `offset` (counts `\n` before it); only used to word a rejection. */
async function lineAt(path: string, offset: number): Promise<number> {
  if (offset === 0) return 1;
  let line = 1;
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK, end: offset - 1 })) {
    const buffer = chunk as Buffer;
    for (let i = buffer.indexOf(10); i !== -1; i = buffer.indexOf(10, i + 1)) line++;
  }
  return line;
}
