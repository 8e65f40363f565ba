import type { RecordKind, Stream } from '../../domain/records.js';
import { CsvSourceError } from './errors.js';

/**
 * The CSV contract's columns per kind of file, and how a file's header row is matched to them
 * (after the source's `mapping`: your header -> contract column).
 */
export interface ColumnSpec {
  name: string;
  required: boolean;
}

const required = (name: string): ColumnSpec => ({ name, required: true });
const optional = (name: string): ColumnSpec => ({ name, required: false });

export const ADDRESS_COLUMNS = [
  'billingAddress.street',
  'billingAddress.city',
  'billingAddress.postalCode',
  'billingAddress.country',
] as const;

export const CSV_COLUMNS: Readonly<Record<Stream, readonly ColumnSpec[]>> = {
  accounts: [
    required('sourceId'),
    required('fullName'),
    required('currencyCode'),
    ...ADDRESS_COLUMNS.map(optional),
    optional('tags'),
    optional('updatedAt'),
  ],
  invoices: [
    required('sourceId'),
    required('accountSourceId'),
    required('number'),
    required('issuedDate'),
    required('dueDate'),
    required('totalAmount'),
    required('taxAmount'),
    ...ADDRESS_COLUMNS.map(optional),
    optional('file'),
    optional('paidAmount'),
    optional('updatedAt'),
  ],
  creditNotes: [
    required('sourceId'),
    required('accountSourceId'),
    required('number'),
    required('issuedDate'),
    required('totalAmount'),
    required('taxAmount'),
    optional('file'),
    optional('updatedAt'),
  ],
};

export const KIND_OF_STREAM: Readonly<Record<Stream, RecordKind>> = {
  accounts: 'account',
  invoices: 'invoice',
  creditNotes: 'creditNote',
};

const ALL_COLUMNS = new Set(Object.values(CSV_COLUMNS).flatMap((specs) => specs.map((spec) => spec.name)));

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

/** Where each contract column sits in a file's rows, and the header cells that matched nothing. */
export interface ResolvedHeader {
  /** Contract column -> field index. Absent optional columns are absent here. */
  index: ReadonlyMap<string, number>;
  /** The header cells as written in the file (trimmed), for reports and raw rows. */
  cells: readonly string[];
  /** Header cells that are not contract columns: ignored. */
  unknown: readonly string[];
}

export type HeaderResolution = { ok: true; header: ResolvedHeader } | { ok: false; reason: string };

/**
 * Matches a header row to the stream's columns: each cell goes through `mapping` (exact, then
 * case-insensitive), then matches a contract column case-insensitively. A missing required column
 * or a column given twice makes the whole file unreadable.
 */
export function resolveHeader(
  stream: Stream,
  rawCells: readonly string[],
  mapping: Readonly<Record<string, string>>,
): HeaderResolution {
  const specs = CSV_COLUMNS[stream];
  const byLower = new Map(specs.map((spec) => [spec.name.toLowerCase(), spec.name]));
  const mappingLower = new Map(Object.entries(mapping).map(([from, to]) => [from.trim().toLowerCase(), to]));
  const cells = rawCells.map((cell) => cell.trim());
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
  const missing = specs.filter((spec) => spec.required && !index.has(spec.name)).map((spec) => spec.name);
  if (missing.length > 0) {
    const plural = missing.length > 1 ? 's' : '';
    return {
      ok: false,
      reason: `missing required column${plural} ${missing.map((name) => `"${name}"`).join(', ')} in the header row`,
    };
  }
  return { ok: true, header: { index, cells, unknown } };
}
