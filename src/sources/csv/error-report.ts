import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { type FileHandle, rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { dataFields, neutralizedCell, REPORT_COLUMNS, type ResolvedHeader } from './columns.js';
import { type CsvRow, readCsvRows } from './csv-rows.js';
import { createExclusive } from './exclusive-entries.js';

/**
 * The report of a file's failed rows, `<name>.errors.csv` beside the archived file:
 * `errors.line,errors.column,errors.reason`, then the row as it was in the file (under the file's
 * own header), so the corrected report can be dropped back as it is (the source leaves the
 * `errors.*` columns out). Warnings on the file (unknown columns) come first, as rows with no data.
 * A cell a spreadsheet would run as a formula is neutralised with a leading `'` (undone on reading).
 *
 * Rows the source refused are spooled to disk as they are found (NDJSON, one per line), so a file
 * of a million bad rows costs no memory; at `complete` they are merged in line order with the rows
 * that failed downstream, whose raw values are read back from the file. The report is written whole
 * into a draft beside the claimed file, then settled with it (see `file-placement.ts`): a full disk
 * leaves no report cut short.
 */
export interface ReportEntry {
  line: number | null;
  column: string;
  sourceId: string;
  reason: string;
  /** The row's fields in file order; null when unknown (then looked up in the file). */
  fields: string[] | null;
}

/** A file written line by line, honouring back-pressure; a write error surfaces on the next call. */
interface LineWriter {
  write(text: string): Promise<void>;
  end(): Promise<void>;
}

/**
 * Writes into a file this process created (see `createExclusive`); ending the writer closes it,
 * flushed to disk first when `flush` is set (a report, about to be settled with its file).
 */
function lineWriterOf(handle: FileHandle, flush = false): LineWriter {
  const out = handle.createWriteStream({ flush });
  let failure: Error | undefined;
  out.on('error', (error) => {
    failure ??= error;
  });
  return {
    async write(text) {
      if (failure) throw failure;
      if (!out.write(text)) await once(out, 'drain');
    },
    async end() {
      if (!out.closed) {
        out.end();
        await once(out, 'close');
      }
      if (failure) throw failure;
    },
  };
}

export class ProblemSpool {
  #out: Promise<LineWriter> | null = null;
  #count = 0;

  /**
   * @param path where entries go, created on the first one, exclusively (a link planted at the
   * name is never written through: the add fails); null only counts them (a dry run writes no report).
   */
  constructor(readonly path: string | null) {}

  get count(): number {
    return this.#count;
  }

  async add(entry: ReportEntry): Promise<void> {
    this.#count++;
    if (this.path === null) return;
    this.#out ??= createExclusive(this.path).then(lineWriterOf);
    await (await this.#out).write(`${JSON.stringify(entry)}\n`);
  }

  async close(): Promise<void> {
    if (this.#out !== null) await (await this.#out).end();
  }

  async *entries(): AsyncGenerator<ReportEntry> {
    if (this.#count === 0 || this.path === null) return;
    await this.close();
    const lines = createInterface({
      input: createReadStream(this.path),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    for await (const line of lines) if (line !== '') yield JSON.parse(line) as ReportEntry;
  }

  async discard(): Promise<void> {
    await this.close().catch(() => undefined);
    if (this.path !== null) await rm(this.path, { force: true });
  }
}

/** RFC 4180 quoting: only when needed; a leading/trailing space is quoted so it survives a trim. */
export function csvCell(value: string): string {
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

const csvLine = (cells: readonly string[]): string =>
  `${cells.map((cell) => csvCell(neutralizedCell(cell))).join(',')}\r\n`;

export interface WriteReportProps {
  /** The report file, created empty by the caller (its draft in `.processing/`); closed here. */
  out: FileHandle;
  /** The file's header: its cells as written, where `sourceId` is, and the warnings on it. */
  header: ResolvedHeader;
  /** The rows the source refused, in line order, with their fields. */
  refused: AsyncIterable<ReportEntry>;
  /** The rows that failed after the source, in line order (those with no line last), no fields. */
  downstream: AsyncIterable<ReportEntry>;
  /** The CSV file, read again (once, in step with the failures) for the fields of downstream ones. */
  csvPath: string;
}

const byLine = (a: ReportEntry, b: ReportEntry): number =>
  (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER);

/**
 * Writes the report into the file the caller created for it, in one streaming pass: the refused
 * and the downstream failures are merged by line, and the file is read alongside for the fields of
 * the latter. Returns the failed rows it lists (a row that failed twice downstream counts once).
 */
export async function writeErrorReport(props: WriteReportProps): Promise<number> {
  const { header } = props;
  const rows = new RowCursor(props.csvPath, header);
  const sourceIdAt = header.index.get('sourceId');
  const out = lineWriterOf(props.out, true);
  let failedRows = 0;
  let lastLine: number | null = null;
  try {
    await out.write(csvLine([...REPORT_COLUMNS, ...header.cells]));
    for (const warning of header.warnings) await out.write(csvLine(['', '', warning]));
    for await (const entry of mergeByLine(props.refused, props.downstream)) {
      if (entry.line === null || entry.line !== lastLine) failedRows++;
      lastLine = entry.line;
      let fields = entry.fields ?? (entry.line === null ? undefined : await rows.fieldsAt(entry.line));
      // The row could not be read back: its sourceId at least, in its own column.
      fields ??= header.cells.map((_, i) => (i === sourceIdAt ? entry.sourceId : ''));
      const line = entry.line === null ? '' : String(entry.line);
      await out.write(csvLine([line, entry.column, entry.reason, ...fields]));
    }
  } catch (error) {
    // The report file is ours to close (it was handed over open), whatever went wrong.
    await out.end().catch(() => undefined);
    throw error;
  } finally {
    await rows.close();
  }
  await out.end();
  return failedRows;
}

/** Two sequences sorted by line, as one. */
async function* mergeByLine(
  a: AsyncIterable<ReportEntry>,
  b: AsyncIterable<ReportEntry>,
): AsyncGenerator<ReportEntry> {
  const left = a[Symbol.asyncIterator]();
  const right = b[Symbol.asyncIterator]();
  let x = await left.next();
  let y = await right.next();
  while (!x.done || !y.done) {
    if (y.done || (!x.done && byLine(x.value, y.value) <= 0)) {
      yield x.value as ReportEntry;
      x = await left.next();
    } else {
      yield y.value;
      y = await right.next();
    }
  }
}

/**
 * The file's rows, read forward once: `fieldsAt(line)` for lines asked in increasing order. A
 * file that cannot be read again gives no fields (they are a courtesy of the report).
 */
class RowCursor {
  readonly #rows: AsyncIterator<CsvRow[]>;
  #batch: CsvRow[] = [];
  #at = 0;
  #done = false;

  constructor(
    csvPath: string,
    private readonly header: ResolvedHeader,
  ) {
    this.#rows = readCsvRows(csvPath)[Symbol.asyncIterator]();
  }

  async fieldsAt(line: number): Promise<string[] | undefined> {
    while (!this.#done) {
      for (; this.#at < this.#batch.length; this.#at++) {
        const row = this.#batch[this.#at]!;
        if (row.line === line) return dataFields(this.header, row.fields);
        if (row.line > line) return undefined;
      }
      try {
        const next = await this.#rows.next();
        if (next.done) this.#done = true;
        else {
          this.#batch = next.value;
          this.#at = 0;
        }
      } catch {
        this.#done = true;
      }
    }
    return undefined;
  }

  async close(): Promise<void> {
    await this.#rows.return?.().catch(() => undefined);
  }
}
