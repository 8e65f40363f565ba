import { closest, distance } from 'fastest-levenshtein';
import type { Stream } from '../../domain/records.js';
import { CONTRACT_COLUMNS } from '../../records/columns.js';
import { CsvSourceError } from './errors.js';

const ALL_COLUMNS = new Set(
  Object.values(CONTRACT_COLUMNS).flatMap((specs) => specs.map((spec) => spec.name)),
);

/**
 * Checks a source's `mapping` once, at start: every target must be a contract column (of any kind),
 * so a typo fails the configuration instead of silently dropping a column.
 */
export function assertValidMapping(sourceId: string, mapping: Readonly<Record<string, string>>): void {
  const lower = new Map([...ALL_COLUMNS].map((name) => [name.toLowerCase(), name]));
  for (const [header, target] of Object.entries(mapping)) {
    if (!lower.has(target.trim().toLowerCase())) {
      throw new CsvSourceError(
        'CSV_MAPPING_INVALID',
        `source "${sourceId}": mapping "${header}" -> "${target}" names no CSV column ` +
          `(known: ${[...ALL_COLUMNS].join(', ')})`,
      );
    }
  }
}

/**
 * The columns an error report puts before the row (`<name>.errors.csv`). A report dropped back as
 * it is, once corrected, is read like any file: these columns are left out (not unknown).
 */
export const REPORT_COLUMNS = ['errors.line', 'errors.column', 'errors.reason'] as const;
const isReportColumn = (cell: string): boolean => cell.toLowerCase().startsWith('errors.');

/** Where each contract column sits in a file's rows, and the header cells that matched nothing. */
export interface ResolvedHeader {
  /** Contract column -> field index. Absent optional columns are absent here. */
  index: ReadonlyMap<string, number>;
  /** The header cells as written in the file (trimmed), for reports and raw rows; a report's own columns left out. */
  cells: readonly string[];
  /** Header cells that are not contract columns: ignored. */
  unknown: readonly string[];
  /** One line per unknown column, with a "did you mean" for a near miss. */
  warnings: readonly string[];
  /** Field indexes of an error report's own columns (a report dropped back): not row data. */
  reportColumns: readonly number[];
  /** The file has no header (`format.headerLine: none`): `cells` are its first row's column letters. */
  headerless?: boolean;
}

/**
 * A row's data fields, as `index` and `cells` count them. In a report dropped back, its own columns
 * are left out and the cells it neutralised (`'=...`, see `neutralizedCell`) get their value back.
 */
export function dataFields(header: ResolvedHeader, fields: readonly string[]): string[] {
  if (header.reportColumns.length === 0) return fields as string[];
  const skip = new Set(header.reportColumns);
  return fields.filter((_, i) => !skip.has(i)).map(restoredCell);
}

const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * A cell a spreadsheet would take as a formula (it starts with `=`, `+`, `-`, `@`, tab or carriage
 * return) gets a leading `'`, as OWASP advises against CSV injection; `restoredCell` undoes it.
 */
export const neutralizedCell = (value: string): string => (FORMULA_START.test(value) ? `'${value}` : value);
const restoredCell = (value: string): string =>
  value.startsWith("'") && FORMULA_START.test(value.slice(1)) ? value.slice(1) : value;

export type HeaderResolution = { ok: true; header: ResolvedHeader } | { ok: false; reason: string };

export interface HeaderOptions {
  /** Your header -> contract column. */
  mapping: Readonly<Record<string, string>>;
  /** An unknown column makes the file unreadable instead of a warning. */
  strictColumns?: boolean;
  /**
   * Default true. False when `columns:` plans the kind (it checks the required columns itself, and
   * an export's many other columns are no news): only the matches by name are wanted.
   */
  contractOnly?: boolean;
}

/**
 * Matches a header row to the stream's columns: each cell goes through `mapping` (exact, then
 * case-insensitive), then matches a contract column case-insensitively. A missing required column
 * or a column given twice makes the whole file unreadable; so does an unknown column with
 * `strictColumns`, which otherwise is a warning (a misspelt `paidAmout` would silently lose data).
 */
export function resolveHeader(
  stream: Stream,
  rawCells: readonly string[],
  options: HeaderOptions,
): HeaderResolution {
  const { mapping } = options;
  const specs = CONTRACT_COLUMNS[stream];
  const byLower = new Map(specs.map((spec) => [spec.name.toLowerCase(), spec.name]));
  const mappingLower = new Map(Object.entries(mapping).map(([from, to]) => [from.trim().toLowerCase(), to]));
  const trimmed = rawCells.map((cell) => cell.trim());
  const reportColumns = trimmed.flatMap((cell, i) => (isReportColumn(cell) ? [i] : []));
  // Indexes below are into a row's data fields: its fields without a report's own columns.
  const cells = trimmed.filter((cell) => !isReportColumn(cell));
  const index = new Map<string, number>();
  const headerOf = new Map<string, string>();
  const unknown: string[] = [];
  for (const [i, cell] of cells.entries()) {
    const target = mapping[cell] ?? mappingLower.get(cell.toLowerCase()) ?? cell;
    const column = byLower.get(target.trim().toLowerCase());
    if (column === undefined) {
      if (cell !== '') unknown.push(cell);
      continue;
    }
    const previous = headerOf.get(column);
    if (previous !== undefined) {
      return {
        ok: false,
        reason: `column "${column}" is given twice in the header (by "${previous}" and "${cell}")`,
      };
    }
    headerOf.set(column, cell);
    index.set(column, i);
  }
  if (options.contractOnly === false)
    return { ok: true, header: { index, cells, unknown, warnings: [], reportColumns } };
  const missing = specs.filter((spec) => spec.required && !index.has(spec.name)).map((spec) => spec.name);
  if (missing.length > 0) {
    const plural = missing.length > 1 ? 's' : '';
    return {
      ok: false,
      reason: `missing required column${plural} ${missing.map((name) => `"${name}"`).join(', ')} in the header row`,
    };
  }
  const absent = specs.map((spec) => spec.name).filter((name) => !index.has(name));
  const described = unknown.map((cell) => describeUnknown(stream, cell, absent));
  if (options.strictColumns && described.length > 0) {
    return {
      ok: false,
      reason: `${described.join('; ')}: strictColumns is on, so a file holds only the CSV contract's columns (or mapped ones)`,
    };
  }
  const warnings = described.map((text) => `${text}: its values were ignored`);
  return { ok: true, header: { index, cells, unknown, warnings, reportColumns } };
}

/** `unknown column "paidAmout" (did you mean "paidAmount"?)`, or where the column belongs. */
export function describeUnknown(stream: Stream, cell: string, absent: readonly string[]): string {
  const base = `unknown column "${cell}"`;
  const near = nearMiss(cell, absent);
  if (near !== null) return `${base} (did you mean "${near}"?)`;
  const lower = cell.toLowerCase();
  const elsewhere = (Object.keys(CONTRACT_COLUMNS) as Stream[]).filter(
    (other) => other !== stream && CONTRACT_COLUMNS[other].some((spec) => spec.name.toLowerCase() === lower),
  );
  return elsewhere.length > 0 ? `${base} (a column of ${elsewhere.join(' and ')} files only)` : base;
}

/** The absent contract column a header cell most likely misspells: at most 2 edits, fewer than a third of it. */
export function nearMiss(cell: string, candidates: readonly string[]): string | null {
  if (candidates.length === 0) return null;
  const lower = cell.toLowerCase();
  const byLower = new Map(candidates.map((name) => [name.toLowerCase(), name]));
  const best = closest(lower, [...byLower.keys()]);
  const edits = distance(lower, best);
  return edits <= 2 && edits * 3 < best.length ? (byLower.get(best) ?? null) : null;
}
