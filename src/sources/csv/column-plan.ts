import type { ColumnRef, ColumnSourceSetting } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';
import { CONTRACT_COLUMNS } from '../../records/columns.js';
import { AccountValues } from './account-values.js';
import { nearMiss } from './columns.js';
import { FileColumns } from './file-columns.js';

/** Where one contract column's value comes from in a file's rows. */
export type ColumnSource =
  | { from: 'cell'; index: number }
  | { from: 'cells'; indexes: readonly number[] }
  | { from: 'value'; value: string }
  | { from: 'first'; indexes: readonly number[] }
  | { from: 'map'; index: number; map: ReadonlyMap<string, string> }
  /** Amounts of the row added up (net + tax). */
  | { from: 'sum'; indexes: readonly number[] }
  /** A date of the row plus days: a constant, or the account's (a column of the accounts file). */
  | { from: 'plusDays'; index: number; days: number | AccountDays };

/** The days an account's row of the accounts file gives, in a column read in the same pass. */
export interface AccountDays {
  ref: ColumnRef;
  values: AccountValues;
}

/** The file's cells a source reads. */
export function indexesOf(source: ColumnSource): readonly number[] {
  switch (source.from) {
    case 'cell':
    case 'map':
    case 'plusDays':
      return [source.index];
    case 'cells':
    case 'first':
    case 'sum':
      return source.indexes;
    case 'value':
      return [];
  }
}

/** The contract columns of a kind, each with where a file's row gives it. */
export interface ColumnPlan {
  stream: Stream;
  sources: ReadonlyMap<string, ColumnSource>;
  /**
   * The same as a plain object, with how each value is read: read for every column of every row,
   * where a property read is cheaper than a map lookup.
   */
  readonly columns: Readonly<Record<string, PlannedColumn | undefined>>;
  /** The file's header cells (trimmed), or its column letters, to name a column as the file writes it. */
  readonly headers: readonly string[];
  /** The file has no header: its columns are named by letter (`column AD`). */
  readonly headerless: boolean;
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
  headerless = false,
): ColumnPlan {
  const columns: Record<string, PlannedColumn> = Object.create(null);
  for (const [column, source] of sources) columns[column] = { source, type: TYPES[column] ?? 'text' };
  return { stream, sources, columns, headers, headerless };
}

/**
 * A contract column as the file names it, for reports: `Brutto (totalAmount)` when a header of
 * another name gives it, `Line1 + Line2 (billingAddress.street)` for joined ones, the column
 * itself when the header has its name or a constant gives it.
 */
export function fileColumnName(plan: ColumnPlan, column: string): string {
  const source = plan.columns[column]?.source;
  if (source === undefined || source.from === 'value') return column;
  const indexes = indexesOf(source);
  const names = indexes.map((i) => plan.headers[i] ?? `#${i + 1}`);
  const joined = names.join(source.from === 'first' ? ' or ' : ' + ');
  // Without a header, `column E (issuedDate)`, `columns H + J (totalAmount)`.
  const written = plan.headerless ? `column${indexes.length > 1 ? 's' : ''} ${joined}` : joined;
  return written === column ? column : `${written} (${column})`;
}

/** One cell of the file as a message names it: `column J` without a header, else its header. */
export const cellName = (plan: ColumnPlan, index: number): string =>
  plan.headerless ? `column ${plan.headers[index] ?? index + 1}` : (plan.headers[index] ?? `#${index + 1}`);

export type PlanResult = { ok: true; plan: ColumnPlan } | { ok: false; reason: string };

/** What a plan may need besides the file's columns. */
export interface PlanContext {
  /** The values of the accounts files read in this pass (`plusDays: { accountColumn }`). */
  accountValues?: AccountValues;
}

/**
 * Plans a kind's columns over a file's header: each column named in `columns.<kind>` from the
 * column(s) it names (a header, exact then case-insensitive; a letter in a file without a header;
 * a number) or its constant; every other contract column from a header of its own name or
 * `mapping` (`found`). A configured column the file lacks, or a required column with no source,
 * makes the file unreadable, the reason naming the key to fix.
 *
 * @param cells the header's cells, trimmed (or the file's columns, `FileColumns`)
 * @param found contract column -> index, as the contract's names and `mapping` matched the header
 * @param fallback columns taken from another kind's plan when neither gives them (a derived
 *   account's `sourceId` from the documents' `accountSourceId`; credit notes from invoices)
 */
export function planColumns(
  stream: Stream,
  cells: FileColumns | readonly string[],
  configured: Readonly<Record<string, ColumnSourceSetting>> | undefined,
  found: ReadonlyMap<string, number>,
  fallback: ReadonlyMap<string, ColumnSource> = new Map(),
  context: PlanContext = {},
): PlanResult {
  const file = cells instanceof FileColumns ? cells : new FileColumns(cells);
  const sources = new Map<string, ColumnSource>();
  for (const [column, setting] of Object.entries(configured ?? {})) {
    const source = sourceOf(setting, file, context);
    if (!('from' in source)) {
      const key = `columns.${stream}.${column}`;
      const near =
        typeof source.missing === 'string' && !file.headerless
          ? nearMiss(
              source.missing,
              file.cells.filter((c) => c !== ''),
            )
          : null;
      return { ok: false, reason: file.missing(key, source.missing, near) };
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
    const what = file.headerless ? `column${plural} (by letter: A, B, ...)` : `header${plural}`;
    return {
      ok: false,
      reason: `missing required column${plural} ${missing.map((m) => `"${m}"`).join(', ')} of ${stream}: name the ${what} (or a constant { value: ... }) in columns.${stream}`,
    };
  }
  return { ok: true, plan: columnPlan(stream, sources, file.cells, file.headerless) };
}

/** The source of a setting, or the column it names that the file lacks. */
function sourceOf(
  setting: ColumnSourceSetting,
  file: FileColumns,
  context: PlanContext,
): ColumnSource | { missing: ColumnRef } {
  const many = (refs: readonly ColumnRef[]): number[] | { missing: ColumnRef } => {
    const indexes: number[] = [];
    for (const ref of refs) {
      const index = file.indexOf(ref);
      if (index === undefined) return { missing: ref };
      indexes.push(index);
    }
    return indexes;
  };
  if (typeof setting === 'string' || typeof setting === 'number') {
    const index = file.indexOf(setting);
    return index === undefined ? { missing: setting } : { from: 'cell', index };
  }
  if (Array.isArray(setting)) {
    const indexes = many(setting);
    return Array.isArray(indexes) ? { from: 'cells', indexes } : indexes;
  }
  if ('value' in setting) return { from: 'value', value: setting.value };
  if ('first' in setting) {
    const indexes = many(setting.first);
    return Array.isArray(indexes) ? { from: 'first', indexes } : indexes;
  }
  if ('sum' in setting) {
    const indexes = many(setting.sum);
    return Array.isArray(indexes) ? { from: 'sum', indexes } : indexes;
  }
  if ('plusDays' in setting) {
    const index = file.indexOf(setting.date);
    if (index === undefined) return { missing: setting.date };
    const { plusDays } = setting;
    if (typeof plusDays === 'number') return { from: 'plusDays', index, days: plusDays };
    // Without the pass's values (doctor reads a file's header only), an empty table: no row is read.
    const values = context.accountValues ?? new AccountValues({ patterns: [], headerless: false });
    return { from: 'plusDays', index, days: { ref: plusDays.accountColumn, values } };
  }
  const index = file.indexOf(setting.header);
  if (index === undefined) return { missing: setting.header };
  const map = new Map(Object.entries(setting.map).map(([from, to]) => [from.trim().toLowerCase(), to]));
  return { from: 'map', index, map };
}

/** The index of a column (a header, a letter without a header, a number), for `skip` and `kindFrom`. */
export function headerIndex(cells: FileColumns | readonly string[], ref: ColumnRef): number | undefined {
  return (cells instanceof FileColumns ? cells : new FileColumns(cells)).indexOf(ref);
}
