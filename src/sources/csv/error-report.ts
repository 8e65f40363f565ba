import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { DownstreamFailure } from '../source.js';
import { dataFields, neutralizedCell, REPORT_COLUMNS, type ResolvedHeader } from './columns.js';
import { readCsvRows } from './csv-rows.js';

/**
 * The report of a file's failed rows, `<name>.errors.csv` beside the archived file:
 * `errors.line,errors.column,errors.reason`, then the row as it was in the file (under the file's
 * own header), so the corrected report can be dropped back as it is (the source leaves the
 * `errors.*` columns out). Warnings on the file (unknown columns) come first, as rows with no data.
 * A cell a spreadsheet would run as a formula is neutralised with a leading `'` (undone on reading).
 *
 * Rows the source refused are spooled to disk as they are found (NDJSON, one per line), so a file
 * of a million bad rows costs no memory; at `complete` they are merged in line order with the rows
 * that failed downstream, whose raw values are read back from the file.
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

function openLineWriter(path: string, flags: 'w' | 'wx'): LineWriter {
  const out = createWriteStream(path, { flags });
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
  #out: LineWriter | null = null;
  #count = 0;

  /** @param path where entries go; null only counts them (a dry run writes no report). */
  constructor(readonly path: string | null) {}

  get count(): number {
    return this.#count;
  }

  async add(entry: ReportEntry): Promise<void> {
    this.#count++;
    if (this.path === null) return;
    this.#out ??= openLineWriter(this.path, 'w');
    await this.#out.write(`${JSON.stringify(entry)}\n`);
  }

  async close(): Promise<void> {
    await this.#out?.end();
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
  reportPath: string;
  /** The file's header: its cells as written, where `sourceId` is, and the warnings on it. */
  header: ResolvedHeader;
  spool: ProblemSpool;
  /** Failures after the source; those on a line the spool already holds are left out (no doubles). */
  downstream: readonly DownstreamFailure[];
  /** The CSV file, read again only for the raw values of rows that failed downstream. */
  csvPath: string;
}

/** Failed rows a report holds: one per refused row, one per distinct line that failed downstream. */
export function countFailedRows(refusedRows: number, downstream: readonly DownstreamFailure[]): number {
  const lines = new Set<number>();
  let unlocated = 0;
  for (const failure of downstream) {
    if (failure.origin.line === undefined) unlocated++;
    else lines.add(failure.origin.line);
  }
  return refusedRows + lines.size + unlocated;
}

const byLine = (a: ReportEntry, b: ReportEntry): number =>
  (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER);

/** Writes the report, refusing to replace an existing file. */
export async function writeErrorReport(props: WriteReportProps): Promise<void> {
  const downstream = props.downstream
    .map(
      (failure): ReportEntry => ({
        line: failure.origin.line ?? null,
        column: failure.column ?? '',
        sourceId: failure.sourceKey,
        reason: failure.reason,
        fields: null,
      }),
    )
    .sort(byLine);
  const { header } = props;
  const wanted = new Set(downstream.flatMap((entry) => (entry.line === null ? [] : [entry.line])));
  const rawByLine = await rawRows(props.csvPath, wanted, header);
  const sourceIdAt = header.index.get('sourceId');
  const out = openLineWriter(props.reportPath, 'wx');
  const write = (entry: ReportEntry): Promise<void> => {
    let fields = entry.fields ?? (entry.line === null ? undefined : rawByLine.get(entry.line));
    if (fields === undefined) {
      // The row could not be read back: its sourceId at least, in its own column.
      fields = header.cells.map((_, i) => (i === sourceIdAt ? entry.sourceId : ''));
    }
    const line = entry.line === null ? '' : String(entry.line);
    return out.write(csvLine([line, entry.column, entry.reason, ...fields]));
  };
  await out.write(csvLine([...REPORT_COLUMNS, ...header.cells]));
  for (const warning of header.warnings) await out.write(csvLine(['', '', warning]));
  let next = 0;
  for await (const entry of props.spool.entries()) {
    while (next < downstream.length && byLine(downstream[next]!, entry) < 0) await write(downstream[next++]!);
    await write(entry);
  }
  while (next < downstream.length) await write(downstream[next++]!);
  await out.end();
}

/** The fields of the records starting on `lines`, read from the file (bounded by `lines.size`). */
async function rawRows(
  csvPath: string,
  lines: ReadonlySet<number>,
  header: ResolvedHeader,
): Promise<Map<number, string[]>> {
  const found = new Map<number, string[]>();
  if (lines.size === 0) return found;
  try {
    for await (const rows of readCsvRows(csvPath)) {
      for (const row of rows) if (lines.has(row.line)) found.set(row.line, dataFields(header, row.fields));
      if (found.size === lines.size) break;
    }
  } catch {
    // The raw values are a courtesy: a file that cannot be read again still gets its report.
  }
  return found;
}
