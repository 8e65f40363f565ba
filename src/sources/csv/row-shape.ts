import type { ColumnSourceSetting, DocumentRowsSettings, SkipRule } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';
import type { AccountValues } from './account-values.js';
import { type ColumnPlan, type ColumnSource, headerIndex, planColumns } from './column-plan.js';
import { dateReader } from './date-format.js';
import { FileColumns } from './file-columns.js';
import type { KindFormat } from './file-format.js';
import { trimmed } from './row-fields.js';
import type { ValueFormat } from './shaped-row.js';

/**
 * How the rows of one file read, from the source's `columns` and `rows` settings for the file's
 * kind, compiled against the file's header once: which kinds its rows make (a file of invoices may
 * hold credit notes, and name its accounts), where each column comes from, which rows to skip.
 */
export interface RowShape {
  /** The kind the file was taken as (by `files`). */
  stream: Stream;
  /** Per kind the rows make: its columns. */
  plans: Partial<Record<Stream, ColumnPlan>>;
  format: ValueFormat;
  /** Rows that make no record (totals, footers): skipped and counted. */
  skip: ReadonlyArray<(fields: readonly string[]) => boolean>;
  /** The header whose value says a row's kind, and the values (lower case) of each kind. */
  kindFrom: { index: number; kinds: ReadonlyMap<string, Stream> } | null;
  negativeIsCreditNote: boolean;
  /** Rows with the same sourceId make one document; these columns are summed over them. */
  group: { sum: readonly string[] } | null;
  deriveAccounts: boolean;
}

export interface ShapeSettings {
  columns?: Partial<Record<Stream, Readonly<Record<string, ColumnSourceSetting>> | undefined>> | undefined;
  rows?: Partial<Record<Stream, Partial<DocumentRowsSettings> | undefined>> | undefined;
}

export type ShapeResult = { ok: true; shape: RowShape } | { ok: false; reason: string };

/** Whether the source says anything about its rows beyond the contract's columns and `mapping`. */
export const hasShape = (settings: ShapeSettings, stream: Stream): boolean =>
  settings.columns?.[stream] !== undefined || settings.rows?.[stream] !== undefined;

/**
 * Compiles the shape of a file of `stream` over its header.
 *
 * @param header the header's cells, or the file's columns (`FileColumns`: by letter without a header)
 * @param found contract column -> index, matched by the contract's names and `mapping`, per kind
 * @param accountValues the values of the accounts files read in this pass, for the columns that
 *   read them (`plusDays: { accountColumn }`)
 */
export function compileShape(
  stream: Stream,
  header: FileColumns | readonly string[],
  settings: ShapeSettings,
  format: KindFormat,
  found: (kind: Stream) => ReadonlyMap<string, number>,
  accountValues?: AccountValues,
): ShapeResult {
  const rows = settings.rows?.[stream] ?? {};
  const plans: Partial<Record<Stream, ColumnPlan>> = {};
  const cells = header instanceof FileColumns ? header : new FileColumns(header);
  const context = accountValues ? { accountValues } : {};
  const main = planColumns(stream, cells, settings.columns?.[stream], found(stream), new Map(), context);
  if (!main.ok) return main;
  plans[stream] = main.plan;
  const kindFrom = rows.kindFrom ? kindColumn(cells, rows.kindFrom) : null;
  if (typeof kindFrom === 'string') return { ok: false, reason: kindFrom };
  const documentKinds = new Set<Stream>(kindFrom?.kinds.values() ?? []);
  if (stream === 'invoices' && rows.negativeIsCreditNote) documentKinds.add('creditNotes');
  for (const kind of documentKinds) {
    if (kind === stream || stream === 'accounts') continue;
    // The other kind reads like the file's own unless columns.<kind> says otherwise.
    const other = planColumns(kind, cells, settings.columns?.[kind], found(kind), main.plan.sources, context);
    if (!other.ok) return other;
    plans[kind] = other.plan;
  }
  if (rows.deriveAccounts && stream !== 'accounts') {
    const fallback = new Map<string, ColumnSource>();
    const accountKey = main.plan.sources.get('accountSourceId');
    if (accountKey) fallback.set('sourceId', accountKey);
    const accounts = planColumns(
      'accounts',
      cells,
      settings.columns?.accounts,
      found('accounts'),
      fallback,
      context,
    );
    if (!accounts.ok) return { ok: false, reason: `deriveAccounts: ${accounts.reason}` };
    plans.accounts = accounts.plan;
  }
  const skip: Array<(fields: readonly string[]) => boolean> = [];
  for (const rule of rows.skip ?? []) {
    const test = skipTest(cells, rule);
    if (typeof test === 'string') return { ok: false, reason: test };
    skip.push(test);
  }
  return {
    ok: true,
    shape: {
      stream,
      plans,
      format: { number: format.number, date: dateReader(format.dateFormat), dateFormat: format.dateFormat },
      skip,
      kindFrom,
      negativeIsCreditNote: rows.negativeIsCreditNote === true && stream !== 'accounts',
      group: rows.group ? { sum: rows.group.sum } : null,
      deriveAccounts: plans.accounts !== undefined && stream !== 'accounts',
    },
  };
}

function kindColumn(
  cells: FileColumns,
  setting: NonNullable<DocumentRowsSettings['kindFrom']>,
): RowShape['kindFrom'] | string {
  const index = headerIndex(cells, setting.column);
  if (index === undefined) return cells.missing('rows.kindFrom.column', setting.column);
  const kinds = new Map<string, Stream>();
  for (const value of setting.invoices ?? []) kinds.set(value.trim().toLowerCase(), 'invoices');
  for (const value of setting.creditNotes ?? []) kinds.set(value.trim().toLowerCase(), 'creditNotes');
  return { index, kinds };
}

function skipTest(cells: FileColumns, rule: SkipRule): ((fields: readonly string[]) => boolean) | string {
  const index = headerIndex(cells, rule.column);
  if (index === undefined) return cells.missing('rows.skip column', rule.column);
  const cellOf = (fields: readonly string[]) => trimmed(fields[index] ?? '');
  if (rule.empty) return (fields) => cellOf(fields) === '';
  if (rule.equals !== undefined) {
    const wanted = rule.equals.trim().toLowerCase();
    return (fields) => cellOf(fields).toLowerCase() === wanted;
  }
  const pattern = new RegExp(rule.matches ?? '', 'iu');
  return (fields) => pattern.test(cellOf(fields));
}
