import { createReadStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { type CsvError, parse } from 'csv-parse';
import { AppError } from '../../domain/errors.js';

/**
 * Streams a CSV file's records with csv-parse, one read chunk at a time, so memory stays bounded by
 * the chunk size and the longest record, whatever the file size.
 *
 * The parser is fed by hand rather than piped: records are taken in `on_record` as they are parsed,
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
 * Bytes fed to the parser at a time: 64 KiB, what Node's file streams read by default. The records
 * of one chunk are all alive until handled, so it is not larger; it is not smaller because each
 * chunk is a round trip to the thread pool, and at 16 KiB a pass sat idle for about 10 ms per
 * 10,000-row file between reads (the peak RSS of a 1,000,000-row file is 254 MB either way).
 */
const READ_CHUNK = 1 << 16;
/** A header row is short: reading it alone should not parse the rows of a whole chunk. */
const HEADER_CHUNK = 1 << 12;

interface RecordContext {
  lines: number;
  empty_lines: number;
}

/**
 * Yields the file's records (the header row included) in arrays of what one read chunk held;
 * `headerOnly` reads small chunks, for a caller that stops after the first record. Stop iterating
 * at any time: the file is closed.
 */
export async function* readCsvRows(
  path: string,
  options: { headerOnly?: boolean } = {},
): AsyncGenerator<CsvRow[]> {
  let pending: CsvRow[] = [];
  // Line numbers are kept here: csv-parse's `info.lines` counts a CRLF inside a quoted field twice,
  // so it only tells that a record spanned several lines; those are then counted in its fields.
  let nextLine = 1;
  let parserLines = 0;
  let emptyLines = 0;
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: MAX_RECORD_CHARS,
    on_record: (fields: string[], context: RecordContext) => {
      const skipped = context.empty_lines - emptyLines;
      const line = nextLine + skipped;
      const multiLine = context.lines - parserLines - skipped > 1;
      nextLine = line + 1 + (multiLine ? lineBreaksIn(fields) : 0);
      parserLines = context.lines;
      emptyLines = context.empty_lines;
      pending.push({ fields, line });
      return null;
    },
  });
  // Errors are taken from write/finish below; this listener only keeps them from being "unhandled".
  parser.on('error', () => undefined);
  const failure = (error: unknown): CsvParseFailure => {
    const csv = error as CsvError & { empty_lines?: number };
    const skipped = typeof csv.empty_lines === 'number' ? Math.max(0, csv.empty_lines - emptyLines) : 0;
    return new CsvParseFailure(nextLine + skipped, String(csv.code ?? 'CSV_UNKNOWN_ERROR'), csv.message);
  };
  const input = createReadStream(path, { highWaterMark: options.headerOnly ? HEADER_CHUNK : READ_CHUNK });
  try {
    for await (const chunk of input as AsyncIterable<Buffer>) {
      let error: unknown;
      await new Promise<void>((resolve) => {
        parser.write(chunk, (err) => {
          error = err ?? undefined;
          resolve();
        });
      });
      if (pending.length > 0) {
        const rows = pending;
        pending = [];
        yield rows;
      }
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
    input.destroy();
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
