import { finished } from 'node:stream/promises';
import { type CsvError, type Options, Parser } from 'csv-parse';
import type { CsvRow } from './csv-rows.js';
import type { RecordDelimiter } from './oversized-record.js';

/**
 * csv-parse's stream, with each record taken where the stream would queue it (`push`), together
 * with the counters of `info` at that moment. This is what `on_record` gives, without the copy of
 * `info` csv-parse makes for every record to call it (a third of the parse time on large files),
 * and without queueing the records in the stream only to read them back.
 */
class RowParser extends Parser {
  constructor(
    private readonly onRow: (fields: string[], lines: number, emptyLines: number, bytes: number) => void,
    options: Options,
  ) {
    super(options);
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk === null) return super.push(chunk, encoding);
    this.onRow(chunk as string[], this.info.lines, this.info.empty_lines, this.info.bytes);
    return true;
  }
}

export interface ParserRunProps {
  /** Where its input starts, in the bytes fed to csv-parse for the file. */
  base: number;
  /** The physical line its input starts on. */
  line: number;
  /** csv-parse's options (a run after the first: the record delimiter settled, no BOM). */
  options: Options;
}

/** Where csv-parse gave up, as the reader reports it. */
export interface ParseStop {
  /** The physical line reading stopped on (blank lines before it counted). */
  line: number;
  code: string;
  message: string;
}

/**
 * One csv-parse parser over the file's bytes from `base` on, its rows given the file's physical
 * lines: the whole file is one run, unless a record over the limit ends one and the next goes on
 * after it (with the record delimiter the first settled on, and no BOM to look for).
 */
export class ParserRun {
  readonly #parser: RowParser;
  readonly #base: number;
  #rows: CsvRow[] = [];
  // Line numbers are kept here: csv-parse's `info.lines` counts a CRLF inside a quoted field twice,
  // so it only tells that a record spanned several lines; those are then counted in its fields.
  #nextLine: number;
  #parserLines = 0;
  #emptyLines = 0;
  #recordEnd: number;

  constructor(props: ParserRunProps) {
    this.#base = props.base;
    this.#nextLine = props.line;
    this.#recordEnd = props.base;
    this.#parser = new RowParser((fields, lines, empty, bytes) => {
      const skipped = empty - this.#emptyLines;
      const line = this.#nextLine + skipped;
      const multiLine = lines - this.#parserLines - skipped > 1;
      this.#nextLine = line + 1 + (multiLine ? lineBreaksIn(fields) : 0);
      this.#parserLines = lines;
      this.#emptyLines = empty;
      this.#recordEnd = this.#base + bytes;
      this.#rows.push({ fields, line });
    }, props.options);
    // Errors are taken from write/finish below; this listener only keeps them from being "unhandled".
    this.#parser.on('error', () => undefined);
  }

  /** The line after the last record delivered. */
  get nextLine(): number {
    return this.#nextLine;
  }

  /** Where the last record delivered ended (past its record delimiter), in the bytes fed to parsers. */
  get recordEnd(): number {
    return this.#recordEnd;
  }

  /** The record delimiter the parser settled on, or null when it met no line break yet. */
  get recordDelimiter(): RecordDelimiter | null {
    const found = this.#parser.options.record_delimiter[0];
    return found === undefined ? null : (found.toString('latin1') as RecordDelimiter);
  }

  /**
   * Feeds `first` (the rest of a slice), then `input` to the parser, yielding the rows of each
   * slice as they come; returns csv-parse's error, or undefined once the input ended cleanly.
   */
  async *parse(input: AsyncIterator<Buffer>, first: Buffer | null): AsyncGenerator<CsvRow[], unknown> {
    if (first !== null && first.length > 0) {
      const error = await this.#write(first);
      if (this.#rows.length > 0) yield this.#take();
      if (error !== undefined) return error;
    }
    for (let next = await input.next(); next.done !== true; next = await input.next()) {
      const error = await this.#write(next.value);
      if (this.#rows.length > 0) yield this.#take();
      if (error !== undefined) return error;
    }
    this.#parser.end();
    try {
      await finished(this.#parser, { readable: false });
    } catch (error) {
      if (this.#rows.length > 0) yield this.#take();
      return error;
    }
    if (this.#rows.length > 0) yield this.#take();
    return undefined;
  }

  /** csv-parse's error as the reader reports it: the line where reading stopped. */
  stop(error: unknown): ParseStop {
    const csv = error as CsvError & { empty_lines?: number };
    const skipped = typeof csv.empty_lines === 'number' ? Math.max(0, csv.empty_lines - this.#emptyLines) : 0;
    return {
      line: this.#nextLine + skipped,
      code: String(csv.code ?? 'CSV_UNKNOWN_ERROR'),
      message: csv.message,
    };
  }

  destroy(): void {
    this.#parser.destroy();
  }

  #write(bytes: Buffer): Promise<unknown> {
    return new Promise<unknown>((resolve) => this.#parser.write(bytes, (err) => resolve(err ?? undefined)));
  }

  #take(): CsvRow[] {
    const rows = this.#rows;
    this.#rows = [];
    return rows;
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
