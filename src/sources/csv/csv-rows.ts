import type { CsvError, Options } from 'csv-parse';
import { AppError } from '../../domain/errors.js';
import type { FileEncoding } from './file-format.js';
import { type OversizedRecord, OversizedRecordScan, type RecordDelimiter } from './oversized-record.js';
import { parserBytes } from './parser-input.js';
import { ParserRun } from './parser-run.js';

/**
 * Streams a CSV file's records with csv-parse, one slice of a read chunk at a time, so memory stays
 * bounded by the chunk size and the longest record, whatever the file size.
 *
 * The parser is fed by hand rather than piped: records are taken as they are parsed (`ParserRun`),
 * so when csv-parse fails mid-chunk (broken quoting) the records before the failure are still
 * delivered, then `CsvParseFailure` is thrown with the line where reading stopped. A record over
 * `MAX_RECORD_CHARS` is the exception: it is delivered as a row marked `oversized`, and the rows
 * after it are read (see `readCsvRows`).
 */
export interface CsvRow {
  fields: string[];
  /** The physical line where the record starts (a quoted field may span several lines). */
  line: number;
  /**
   * Set on a record over `MAX_RECORD_CHARS`, which cannot be read whole: `fields` holds each
   * field's first characters (a cut one ends with `…`), enough to name the row; the caller refuses it.
   */
  oversized?: OversizedRecord;
}

/** csv-parse gave up: nothing from `line` on can be read. */
export class CsvParseFailure extends AppError {
  constructor(
    readonly line: number,
    readonly csvCode: string,
    message: string,
  ) {
    super('CSV_PARSE_FAILED', message);
  }
}

/**
 * Longest record read (characters): an unclosed quote must not pull the whole file into memory. A
 * longer record is refused as a row of its own, the rows after it read (`OversizedRecordScan`).
 */
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

/**
 * A record over `MAX_RECORD_CHARS` does not end the reading: csv-parse gives up on it, so the file
 * is read again from the end of the last record delivered (`parserBytes`), the record's end found
 * by `OversizedRecordScan`, the record delivered as a row with `oversized` set, and a new parser
 * goes on after it, its lines counted on from the record's last. Only a record that never ends (a
 * quote left open to the end of the file) or whose quoting csv-parse would refuse stops the
 * reading there, with `CsvParseFailure`.
 */
export async function* readCsvRows(path: string, options: ReadOptions = {}): AsyncGenerator<CsvRow[]> {
  const delimiter = options.delimiter ?? ',';
  const chunkSize = options.headerOnly ? HEADER_CHUNK : READ_CHUNK;
  const bytesFrom = (from: number) =>
    parserBytes(path, { encoding: options.encoding, chunkSize, sliceSize: PARSE_SLICE, from });
  const failure = (error: unknown) => {
    const stop = run.stop(error);
    return new CsvParseFailure(stop.line, stop.code, stop.message);
  };
  let run = new ParserRun({
    base: 0,
    line: 1,
    options: delimiter === ',' ? CSV_PARSE_OPTIONS : { ...CSV_PARSE_OPTIONS, delimiter },
  });
  let input = bytesFrom(0);
  let first: Buffer | null = null;
  try {
    for (;;) {
      const error = yield* run.parse(input, first);
      if (error === undefined) return;
      if ((error as CsvError).code !== 'CSV_MAX_RECORD_SIZE') throw failure(error);
      await input.return(undefined);
      input = bytesFrom(run.recordEnd);
      const scan = new OversizedRecordScan({
        delimiter,
        recordDelimiter: run.recordDelimiter,
        line: run.nextLine,
        atFileStart: run.recordEnd === 0,
      });
      const after = await endOf(scan, input, run.recordEnd);
      if (after === null) throw failure(error);
      yield [scan.row()];
      run.destroy();
      run = new ParserRun({
        base: after.offset,
        line: scan.nextLine,
        options: optionsAfter(delimiter, scan.recordDelimiter),
      });
      first = after.rest;
    }
  } finally {
    await input.return(undefined);
    run.destroy();
  }
}

/**
 * Scans `input` (the parser's bytes from `offset` on) to the end of the oversized record; returns
 * the offset after it and what its last slice holds past it, or null when it has no end.
 */
async function endOf(
  scan: OversizedRecordScan,
  input: AsyncIterator<Buffer>,
  offset: number,
): Promise<{ offset: number; rest: Buffer | null } | null> {
  let at = offset;
  for (let next = await input.next(); next.done !== true; next = await input.next()) {
    const bytes = next.value;
    const end = scan.scan(bytes);
    if (end >= 0) return { offset: at + end, rest: bytes.subarray(end) };
    if (scan.broken !== null) return null;
    at += bytes.length;
  }
  return scan.finish() ? { offset: at, rest: null } : null;
}

/** csv-parse's options past an oversized record: the record delimiter found before, no BOM to look for. */
const optionsAfter = (delimiter: string, recordDelimiter: RecordDelimiter | null): Options => ({
  ...CSV_PARSE_OPTIONS,
  delimiter,
  bom: false,
  ...(recordDelimiter === null ? {} : { record_delimiter: recordDelimiter }),
});

export { lineBreaksIn } from './parser-run.js';
