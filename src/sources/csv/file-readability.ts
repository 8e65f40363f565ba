import type { ColumnRef } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';
import { printable } from '../../logging/printable-text.js';
import { type AccountValues, accountColumnsRead } from './account-values.js';
import { type HeaderOptions, type ResolvedHeader, resolveHeader } from './columns.js';
import { CsvParseFailure, readCsvRows } from './csv-rows.js';
import type { DropFolder } from './drop-folder.js';
import { readFileChunks } from './file-chunks.js';
import { columnLetters, FileColumns } from './file-columns.js';
import {
  type Delimiter,
  detectDelimiter,
  type FileEncoding,
  type FormatConfig,
  kindFormat,
  oneCellHint,
  settleEncoding,
} from './file-format.js';
import type { FileInspection } from './file-inspection.js';
import { compileShape, hasShape, type RowShape, type ShapeSettings } from './row-shape.js';

/** What `readability` needs of the source. */
export interface ReadabilityScope {
  folder: DropFolder;
  /** A dry run reads the file in place: it spools nothing, so nothing is checked in `.processing/`. */
  dryRun: boolean;
  config: HeaderOptions & FormatConfig & ShapeSettings;
  /**
   * The values of the accounts files read in this pass, for document columns that read them
   * (`plusDays: { accountColumn }`): an accounts file's rows fill it, a documents file's read it.
   * Absent where no row is read (`doctor`).
   */
  accountValues?: AccountValues;
}

/** How a claimed file is read, settled before any row is used. */
export interface FileReading {
  encoding: FileEncoding;
  delimiter: Delimiter;
  /** The header's line: the lines above it are not the file's data (a report's title); null: none. */
  headerLine: number | null;
  /** Set when `columns:` or `rows:` say how the file's rows read. */
  shape: RowShape | null;
  /** Whether the file's bytes could hold text encoded twice, read so: its rows are looked at. */
  mayBeEncodedTwice: boolean;
  /**
   * An accounts file whose columns document columns read: where each is in its rows, and the
   * pass's table its rows' values go to. Null for any other file.
   */
  accountValues: { values: AccountValues; columns: ReadonlyArray<{ ref: ColumnRef; index: number }> } | null;
}

export type Readability =
  | { ok: true; header: ResolvedHeader; reading: FileReading }
  | { ok: false; reason: string };

/**
 * Whether a claimed file can be read, before any row is used: nothing planted where its report is
 * spooled, its encoding (its BOM's, the configured one, or UTF-8 / Windows-1252 for `auto`), its
 * delimiter, a header that fits its kind. Not readable: the reason, for `rejected/`.
 */
export async function readability(
  scope: ReadabilityScope,
  file: { name: string; path: string; stream: Stream },
  inspection: FileInspection,
): Promise<Readability> {
  const planted = scope.dryRun ? [] : await scope.folder.clearSpools(file.name);
  if (planted.length > 0) return { ok: false, reason: plantedSpoolReason(planted) };
  const { config } = scope;
  // A report of failed rows dropped back (`<name>.errors.csv`) is written by this source: UTF-8,
  // commas, its header first, whatever the export's own encoding, delimiter and title lines were.
  const report = REPORT_NAME.test(file.name);
  const kind = kindFormat(config, file.stream);
  const format = report
    ? { ...kind, encoding: 'utf-8' as const, delimiter: ',' as const, headerLine: 1 }
    : kind;
  const encoding = settleEncoding(format.encoding, inspection.bom, inspection.invalidUtf8 === null);
  if (encoding === 'utf-8' && inspection.invalidUtf8) {
    const { offset, line } = inspection.invalidUtf8;
    return {
      ok: false,
      reason: `not valid UTF-8: the first invalid byte is at offset ${offset} (line ${line}); save the file as UTF-8, or set format.encoding (windows-1252, iso-8859-1, or auto)`,
    };
  }
  const headerless = format.headerLine === null;
  const delimiter =
    format.delimiter === 'auto'
      ? detectDelimiter(await physicalLine(file.path, encoding, format.headerLine ?? 1))
      : format.delimiter;
  const read = await readHeader(file.path, { encoding, delimiter, headerLine: format.headerLine });
  if (!read.ok) return read;
  // Without a header, the file's columns are its first row's, named by letter: A, B, ... AX.
  const cells = headerless ? columnLetters(read.cells.length) : read.cells;
  const twice = inspection.mayBeEncodedTwice;
  const reading: FileReading = {
    encoding,
    delimiter,
    headerLine: format.headerLine,
    shape: null,
    mayBeEncodedTwice:
      encoding.startsWith('utf-16') || (encoding === 'utf-8' ? twice.utf8 : twice.singleByte),
    accountValues: null,
  };
  const shaped = hasShape(config, file.stream);
  if (headerless && config.columns?.[file.stream] === undefined)
    return {
      ok: false,
      reason: withDelimiterHint(
        `the file has no header (format.headerLine: none): columns.${file.stream} must say which column holds each value, by letter (A, B, ... AX) or number`,
        read.cells,
        delimiter,
      ),
    };
  const mappingOf = (kind: Stream) => (config.columns?.[kind] ? {} : config.mapping);
  const classic = resolveHeader(file.stream, cells, {
    mapping: mappingOf(file.stream),
    ...(config.strictColumns !== undefined ? { strictColumns: config.strictColumns } : {}),
    contractOnly: !shaped,
  });
  if (!classic.ok) return { ok: false, reason: withDelimiterHint(classic.reason, read.cells, delimiter) };
  const header: ResolvedHeader = headerless ? { ...classic.header, headerless: true } : classic.header;
  const columns = new FileColumns(header.cells, headerless);
  if (file.stream === 'accounts') {
    const values = accountValuesOf(scope, columns);
    if (typeof values === 'string')
      return { ok: false, reason: withDelimiterHint(values, read.cells, delimiter) };
    reading.accountValues = values;
  }
  if (!shaped) return { ok: true, header, reading };
  const found = (kind: Stream): ReadonlyMap<string, number> => {
    if (kind === file.stream) return header.index;
    const other = resolveHeader(kind, cells, { mapping: mappingOf(kind), contractOnly: false });
    return other.ok ? other.header.index : new Map();
  };
  const shape = compileShape(file.stream, columns, config, format, found, scope.accountValues);
  if (!shape.ok) return { ok: false, reason: withDelimiterHint(shape.reason, read.cells, delimiter) };
  return { ok: true, header, reading: { ...reading, shape: shape.shape } };
}

/**
 * Where an accounts file holds the columns document columns read (`plusDays: { accountColumn }`):
 * a column it lacks rejects it, naming the key, as any configured column does.
 */
function accountValuesOf(
  scope: ReadabilityScope,
  columns: FileColumns,
): FileReading['accountValues'] | string {
  const found: Array<{ ref: ColumnRef; index: number }> = [];
  for (const { ref, key } of accountColumnsRead(scope.config.columns)) {
    const index = columns.indexOf(ref);
    if (index === undefined) return columns.missing(key, ref);
    found.push({ ref, index });
  }
  return found.length === 0 || scope.accountValues === undefined
    ? null
    : { values: scope.accountValues, columns: found };
}

/** A header read as one cell that holds another delimiter: that first, then what it caused. */
function withDelimiterHint(reason: string, cells: readonly string[], delimiter: string): string {
  const hint = oneCellHint(cells, delimiter);
  return hint === null ? reason : `${hint}; so: ${reason}`;
}

const REPORT_NAME = /\.errors\.csv$/i;

/** Why a file is rejected when entries someone planted sit where its report is spooled. */
const plantedSpoolReason = (planted: readonly string[]): string =>
  `${planted.map(printable).join(', ')} stands where the source spools this file's report, and the source never ` +
  'makes such an entry: someone who can write the drop folder put it there to have it written ' +
  'through. The file was not read; remove the entry, check who can write the drop folder, and drop ' +
  'the file again';

/**
 * Reads the header row (the first record on or after `headerLine`), or, for a file without a
 * header (null), its first row, whose width names its columns; the unit reads the file again from
 * the start.
 */
async function readHeader(
  path: string,
  options: { encoding: FileEncoding; delimiter: Delimiter; headerLine: number | null },
): Promise<{ ok: true; cells: string[] } | { ok: false; reason: string }> {
  const from = options.headerLine ?? 1;
  const what = options.headerLine === null ? 'first row' : 'header row';
  try {
    const { encoding, delimiter } = options;
    for await (const rows of readCsvRows(path, { headerOnly: true, encoding, delimiter })) {
      const first = rows.find((row) => row.line >= from);
      if (first?.oversized !== undefined) {
        const size = `${first.oversized.chars.toLocaleString('en-US')} characters`;
        return {
          ok: false,
          reason: `the ${what} cannot be read: it is over 1 MiB (${size}) on line ${first.line}`,
        };
      }
      if (first !== undefined) return { ok: true, cells: first.fields };
    }
  } catch (error) {
    if (!(error instanceof CsvParseFailure)) throw error;
    return { ok: false, reason: `the ${what} cannot be read: ${error.message}` };
  }
  if (options.headerLine === null) return { ok: false, reason: 'the file is empty: it has no row' };
  return options.headerLine > 1
    ? { ok: false, reason: `no header on line ${options.headerLine} or after it (format.headerLine)` }
    : { ok: false, reason: 'the file is empty: a header row is required' };
}

/** The text of the file's physical line `line` (its first 64 KiB are enough for a header). */
async function physicalLine(path: string, encoding: FileEncoding, line: number): Promise<string> {
  for await (const chunk of readFileChunks(path, { chunkSize: 1 << 16 })) {
    const text = new TextDecoder(encoding).decode(chunk);
    return text.split(/\r\n|\n|\r/)[line - 1] ?? '';
  }
  return '';
}
