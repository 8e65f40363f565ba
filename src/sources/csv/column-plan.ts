import type { ColumnSourceSetting } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';
import { CONTRACT_COLUMNS } from '../../records/columns.js';
import { nearMiss } from './columns.js';

/** Where one contract column's value comes from in a file's rows. */
export type ColumnSource =
  | { from: 'cell'; index: number }
  | { from: 'cells'; indexes: readonly number[] }
  | { from: 'value'; value: string }
  | { from: 'first'; indexes: readonly number[] }
  | { from: 'map'; index: number; map: ReadonlyMap<string, string> };

/** The contract columns of a kind, each with where a file's row gives it. */
export interface ColumnPlan {
  stream: Stream;
  sources: ReadonlyMap<string, ColumnSource>;
  /**
   * The same as a plain object, with how each value is read: read for every column of every row,
   * where a property read is cheaper than a map lookup.
   */
  readonly columns: Readonly<Record<string, PlannedColumn | undefined>>;
  /** The file's header cells (trimmed), to name a column as the file writes it. */
  readonly headers: readonly string[];
}

export interface PlannedColumn {
  source: ColumnSource;
  /** Amounts and dates are rewritten from the file's format; text is taken as it is. */
  type: 'amount' | 'date' | 'text';
}

const TYPES: Readonly<Record<string, PlannedColumn['type']>> = {
  totalAmount: 'amount',
  taxAmount: 'amount',
  paidAmount: 'amount',
  openAmount: 'amount',
  issuedDate: 'date',
  dueDate: 'date',
};

/** A plan of these sources (made once per file). */
export function columnPlan(
  stream: Stream,
  sources: ReadonlyMap<string, ColumnSource>,
  headers: readonly string[] = [],
): ColumnPlan {
  const columns: Record<string, PlannedColumn> = Object.create(null);
  for (const [column, source] of sources) columns[column] = { source, type: TYPES[column] ?? 'text' };
  return { stream, sources, columns, headers };
}

/**
 * A contract column as the file names it, for reports: `Brutto (totalAmount)` when a header of
 * another name gives it, `Line1 + Line2 (billingAddress.street)` for joined ones, the column
 * itself when the header has its name or a constant gives it.
 */
export function fileColumnName(plan: ColumnPlan, column: string): string {
  const source = plan.columns[column]?.source;
  if (source === undefined || source.from === 'value') return column;
  const indexes = source.from === 'cell' || source.from === 'map' ? [source.index] : source.indexes;
  const names = indexes.map((i) => plan.headers[i] ?? `#${i + 1}`);
  const written = names.join(source.from === 'first' ? ' or ' : ' + ');
  return written === column ? column : `${written} (${column})`;
}

export type PlanResult = { ok: true; plan: ColumnPlan } | { ok: false; reason: string };

/**
 * Plans a kind's columns over a file's header: each column named in `columns.<kind>` from the
 * header(s) it names (exact, then case-insensitive) or its constant; every other contract column
 * from a header of its own name or `mapping` (`found`). A configured header the file lacks, or a
 * required column with no source, makes the file unreadable, the reason naming the key to fix.
 *
 * @param cells the header's cells, trimmed
 * @param found contract column -> index, as the contract's names and `mapping` matched the header
 * @param fallback columns taken from another kind's plan when neither gives them (a derived
 *   account's `sourceId` from the documents' `accountSourceId`; credit notes from invoices)
 */
export function planColumns(
  stream: Stream,
  cells: readonly string[],
  configured: Readonly<Record<string, ColumnSourceSetting>> | undefined,
  found: ReadonlyMap<string, number>,
  fallback: ReadonlyMap<string, ColumnSource> = new Map(),
): PlanResult {
  const sources = new Map<string, ColumnSource>();
  const lookup = headerLookup(cells);
  for (const [column, setting] of Object.entries(configured ?? {})) {
    const source = sourceOf(setting, lookup);
    if (typeof source === 'string') {
      const near = nearMiss(
        source,
        cells.filter((c) => c !== ''),
      );
      return {
        ok: false,
        reason: `columns.${stream}.${column} names the header "${source}", which this file does not have${near ? ` (did you mean "${near}"?)` : ''}; its headers: ${cells.filter((c) => c !== '').join(', ')}`,
      };
    }
    sources.set(column, source);
  }
  for (const [column, index] of found) if (!sources.has(column)) sources.set(column, { from: 'cell', index });
  for (const [column, source] of fallback) if (!sources.has(column)) sources.set(column, source);
  const missing = CONTRACT_COLUMNS[stream]
    .filter((spec) => spec.required && !sources.has(spec.name))
    .map((spec) => spec.name);
  if (missing.length > 0) {
    const plural = missing.length > 1 ? 's' : '';
    return {
      ok: false,
      reason: `missing required column${plural} ${missing.map((m) => `"${m}"`).join(', ')} of ${stream}: name the header${plural} (or a constant { value: ... }) in columns.${stream}`,
    };
  }
  return { ok: true, plan: columnPlan(stream, sources, cells) };
}

type Lookup = (header: string) => number | undefined;

function headerLookup(cells: readonly string[]): Lookup {
  const exact = new Map<string, number>();
  const lower = new Map<string, number>();
  for (const [i, cell] of cells.entries()) {
    if (!exact.has(cell)) exact.set(cell, i);
    if (!lower.has(cell.toLowerCase())) lower.set(cell.toLowerCase(), i);
  }
  return (header) => exact.get(header.trim()) ?? lower.get(header.trim().toLowerCase());
}

/** The source of a setting, or the header it names that the file lacks. */
function sourceOf(setting: ColumnSourceSetting, lookup: Lookup): ColumnSource | string {
  if (typeof setting === 'string') {
    const index = lookup(setting);
    return index === undefined ? setting : { from: 'cell', index };
  }
  if (Array.isArray(setting)) {
    const indexes: number[] = [];
    for (const header of setting) {
      const index = lookup(header);
      if (index === undefined) return header;
      indexes.push(index);
    }
    return { from: 'cells', indexes };
  }
  if ('value' in setting) return { from: 'value', value: setting.value };
  if ('first' in setting) {
    const indexes: number[] = [];
    for (const header of setting.first) {
      const index = lookup(header);
      if (index === undefined) return header;
      indexes.push(index);
    }
    return { from: 'first', indexes };
  }
  const index = lookup(setting.header);
  if (index === undefined) return setting.header;
  const map = new Map(Object.entries(setting.map).map(([from, to]) => [from.trim().toLowerCase(), to]));
  return { from: 'map', index, map };
}

/** The index of a header (exact, then case-insensitive), for `skip` and `kindFrom`. */
export function headerIndex(cells: readonly string[], header: string): number | undefined {
  return headerLookup(cells)(header);
}
