import { finished } from 'node:stream/promises';
import { type CsvError, type Options, Parser } from 'csv-parse';
import { AppError } from '../../domain/errors.js';
import { readFileChunks } from './file-chunks.js';
import type { FileEncoding } from './file-format.js';
import { parserInput } from './parser-input.js';

/**
 * Streams a CSV file's records with csv-parse, one slice of a read chunk at a time, so memory stays
 * bounded by the chunk size and the longest record, whatever the file size.
 *
 * The parser is fed by hand rather than piped: records are taken as they are parsed (`RowParser`),
 * so when csv-parse fails mid-chunk (broken quoting) the records before the failure are still
 * delivered, then `CsvParseFailure` is thrown with the line where reading stopped.
 */
export interface CsvRow {
  fields: string[];
  /** The physical line where the record starts (a quoted field may span several lines). */
  line: number;
}

/** csv-parse gave up: nothing from `line` on can be read. */
export class CsvParseFailure extends AppError {
  constructor(
    readonly line: number,
    readonly csvCode: string,
    message: string,
  ) {
    super('CSV_PARSE_FAILED', message, { kind: 'data' });
  }
}

/** Longest record accepted (characters): an unclosed quote must not pull the whole file into memory. */
export const MAX_RECORD_CHARS = 1 << 20;
/**
 * Bytes read at a time: 256 KiB, each read a round trip to the thread pool (at 16 KiB a pass sat
 * idle for about 10 ms per 10,000-row file between reads). The next read is under way while a
 * chunk is parsed, and the parser takes a chunk in slices (`PARSE_SLICE`), so a larger read does
 * not keep more rows alive.
 */
export const READ_CHUNK = 1 << 18;
/**
 * Bytes parsed at a time, out of a read chunk: the rows of a slice are handed over before the next
 * is parsed. Rows waiting to be handled survive each young-generation collection that meets them,
 * and V8 grows the young generation once as many bytes survived as it holds: with whole 64 KiB
 * chunks (about 580 invoice rows alive at once) it grew to its maximum on large files, over
 * 100 MB of the peak RSS under Node 24.
 */
const PARSE_SLICE = 1 << 14;
/** A header row is short: reading it alone should not parse the rows of a whole chunk. */
const HEADER_CHUNK = 1 << 12;

/**
 * The csv-parse options the source reads files with (array rows): exported so the benchmarks
 * measure bare csv-parse in this same mode.
 */
export const CSV_PARSE_OPTIONS = {
  bom: true,
  relax_column_count: true,
  skip_empty_lines: true,
  max_record_size: MAX_RECORD_CHARS,
} as const satisfies Options;

/**
 * csv-parse's stream, with each record taken where the stream would queue it (`push`), together
 * with the counters of `info` at that moment. This is what `on_record` gives, without the copy of
 * `info` csv-parse makes for every record to call it (a third of the parse time on large files),
 * and without queueing the records in the stream only to read them back.
 */
class RowParser extends Parser {
  constructor(
    private readonly onRow: (fields: string[], lines: number, emptyLines: number) => void,
    delimiter: string,
  ) {
    super(delimiter === ',' ? CSV_PARSE_OPTIONS : { ...CSV_PARSE_OPTIONS, delimiter });
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding);
    this.onRow(chunk as string[], this.info.lines, this.info.empty_lines);
    return true;
  }
}

/**
 * Yields the file's records (the header row included) in arrays of what one slice of a read chunk
 * held, each array the caller's own (it may take rows out as it handles them); `headerOnly` reads
 * small chunks, for a caller that stops after the first record. Stop iterating at any time: the
 * file is closed.
 */
export interface ReadOptions {
  /** Read small chunks, for a caller that stops after the first records. */
  headerOnly?: boolean;
  /** The file's encoding (default UTF-8): other encodings are decoded before parsing (`parserInput`). */
  encoding?: FileEncoding;
  /** Default `,`. */
  delimiter?: string;
}

export async function* readCsvRows(path: string, options: ReadOptions = {}): AsyncGenerator<CsvRow[]> {
  let pending: CsvRow[] = [];
  // Line numbers are kept here: csv-parse's `info.lines` counts a CRLF inside a quoted field twice,
  // so it only tells that a record spanned several lines; those are then counted in its fields.
  let nextLine = 1;
  let parserLines = 0;
  let emptyLines = 0;
  const parser = new RowParser((fields, lines, empty) => {
    const skipped = empty - emptyLines;
    const line = nextLine + skipped;
    const multiLine = lines - parserLines - skipped > 1;
    nextLine = line + 1 + (multiLine ? lineBreaksIn(fields) : 0);
    parserLines = lines;
    emptyLines = empty;
    pending.push({ fields, line });
  }, options.delimiter ?? ',');
  // Errors are taken from write/finish below; this listener only keeps them from being "unhandled".
  parser.on('error', () => undefined);
  const failure = (error: unknown): CsvParseFailure => {
    const csv = error as CsvError & { empty_lines?: number };
    const skipped = typeof csv.empty_lines === 'number' ? Math.max(0, csv.empty_lines - emptyLines) : 0;
    return new CsvParseFailure(nextLine + skipped, String(csv.code ?? 'CSV_UNKNOWN_ERROR'), csv.message);
  };
  // UTF-8 goes to csv-parse as bytes (it decodes them, BOM included); any other encoding is decoded
  // here, a character cut between two slices held back by the streaming decoder.
  const input = parserInput(options.encoding);
  const write = (bytes: Buffer) =>
    new Promise<unknown>((resolve) => parser.write(input.next(bytes), (err) => resolve(err ?? undefined)));
  // Two buffers read into in turn: csv-parse keeps a view of an unfinished record's bytes in the
  // previous chunk until the next one is written (then it copies them), and parses synchronously.
  const chunks = readFileChunks(path, {
    chunkSize: options.headerOnly ? HEADER_CHUNK : READ_CHUNK,
    buffers: 2,
  });
  try {
    for await (const chunk of chunks) {
      for (let at = 0; at < chunk.length; at += PARSE_SLICE) {
        const error = await write(chunk.subarray(at, at + PARSE_SLICE));
        if (pending.length > 0) {
          const rows = pending;
          pending = [];
          yield rows;
        }
        if (error !== undefined) throw failure(error);
      }
    }
    const rest = input.end();
    if (rest !== '') {
      const error = await new Promise<unknown>((resolve) =>
        parser.write(rest, (err) => resolve(err ?? undefined)),
      );
      if (error !== undefined) throw failure(error);
    }
    parser.end();
    try {
      await finished(parser, { readable: false });
    } catch (error) {
      if (pending.length > 0) yield pending;
      throw failure(error);
    }
    if (pending.length > 0) yield pending;
  } finally {
    await chunks.return(undefined);
    parser.destroy();
  }
}

/**
 * Line breaks inside a record's (quoted) fields: CRLF, LF or a lone CR each count once. A CR that
 * ends the record is the rest of a CRLF the parser did not take as the delimiter, not a break.
 */
export function lineBreaksIn(fields: readonly string[]): number {
  let breaks = 0;
  for (const [f, field] of fields.entries()) {
    for (let i = field.indexOf('\n'); i !== -1; i = field.indexOf('\n', i + 1)) breaks++;
    const end = f === fields.length - 1 ? field.length - 1 : field.length;
    for (let i = field.indexOf('\r'); i !== -1 && i < end; i = field.indexOf('\r', i + 1)) {
      if (field[i + 1] !== '\n') breaks++;
    }
  }
  return breaks;
}
