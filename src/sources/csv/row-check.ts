import type { SourceRecord, Stream } from '../../domain/records.js';
import { RECORD_BUILDERS, type RowIssue, type RowView } from '../../records/record-builders.js';
import type { ResolvedHeader } from './columns.js';
import { MAX_RECORD_CHARS } from './csv-rows.js';
import { letterSpan } from './file-columns.js';
import type { FirstSeenIndex } from './first-seen-index.js';
import type { OversizedRecord } from './oversized-record.js';
import { trimmed } from './row-fields.js';
import { ShapedRow } from './shaped-row.js';

/**
 * A CSV row's check, everything that needs no file system: its record built (every problem of
 * the row, not only the first), its field count against the header, its sourceId not seen before
 * in the file (per kind: an invoice and a credit note may share one).
 */
/** A data row to check: its kind and values (a shaped file's row, or a contract row as it is). */
export interface RowToCheck {
  kind: Stream;
  view: RowView;
  line: number;
  fields: readonly string[];
  /** Problems found over several rows (a grouped document's). */
  issues?: readonly RowIssue[];
}

export interface CheckedRow {
  record: SourceRecord | null;
  issues: RowIssue[];
  sourceId: string;
  duplicate: boolean;
  /** The `file` column as written; '' when empty (or an accounts file). */
  pdfText: string;
}

export interface RowCheckContext {
  header: ResolvedHeader;
  /** The kind the file was taken as: its keys are the file's own, other kinds' are prefixed. */
  stream: Stream;
  firstLineOf: FirstSeenIndex;
  /** The rows of a document are grouped: a key seen again says they must follow each other. */
  grouped: boolean;
}

export function checkRow(row: RowToCheck, ctx: RowCheckContext): CheckedRow {
  const { header } = ctx;
  const built = RECORD_BUILDERS[row.kind](row.view);
  // The builder's own array, made for this row: the issues found here join it.
  const issues: RowIssue[] = built.issues;
  if (row.issues !== undefined && row.issues.length > 0) issues.push(...row.issues);
  if (row.fields.length !== header.cells.length) {
    const reason = header.headerless
      ? widthReason(row, header.cells.length)
      : `the row has ${row.fields.length} fields but the header has ${header.cells.length}`;
    issues.unshift({ column: '', reason });
  }
  const sourceId = row.view.get('sourceId');
  const key = row.kind === ctx.stream ? sourceId : `${row.kind}\u0000${sourceId}`;
  const first = sourceId === '' ? undefined : ctx.firstLineOf.firstSeen(key, row.line);
  if (first !== undefined) {
    const together = ctx.grouped
      ? ': the rows of one document must follow each other (sort the export by it)'
      : '';
    issues.push({
      column: 'sourceId',
      reason: `duplicate sourceId in this file (first on line ${first})${together}`,
    });
  }
  const pdfText = row.kind === 'accounts' ? '' : row.view.get('file');
  return { record: built.record, issues, sourceId, duplicate: first !== undefined, pdfText };
}

/**
 * A row of a file without a header whose width is not its first row's: its values would be read
 * from the wrong columns (a comma left unquoted shifts them all). Names the columns read that the
 * row lacks, by letter.
 */
function widthReason(row: RowToCheck, width: number): string {
  const n = row.fields.length;
  const reason = `the row has ${n} column${n === 1 ? '' : 's'} (${letterSpan(n)}) but the file's first row has ${width} (${letterSpan(width)})`;
  const lacking = row.view instanceof ShapedRow ? row.view.columnsBeyond(n) : [];
  return lacking.length > 0 ? `${reason}: it has no ${lacking.join(', ')}` : reason;
}

/** A refused row as its report and failure say it: columns as the file names them. */
export function refusalEntry(row: RowToCheck, checked: CheckedRow) {
  // Columns as the file names them (`Brutto (totalAmount)`) when the configuration renamed them.
  const named = nameColumns(checked.issues, row.view);
  return {
    line: row.line,
    column: named.map((issue) => issue.column).join('; '),
    sourceId: checked.sourceId,
    reason: named.length === 1 ? named[0]!.reason : named.map(describeIssue).join('; '),
    fields: [...row.fields],
    kind: row.kind,
  };
}

const nameColumns = (issues: readonly RowIssue[], view: RowView): RowIssue[] =>
  view instanceof ShapedRow
    ? issues.map((issue) => ({ column: view.columnName(issue.column), reason: issue.reason }))
    : (issues as RowIssue[]);

const describeIssue = (issue: RowIssue): string =>
  issue.column === '' ? issue.reason : `${issue.column}: ${issue.reason}`;

/** The row under the file's own header names (`#7` for a field beyond the header or unnamed). */
export function rawRecord(cells: readonly string[], fields: readonly string[]): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const [i, value] of fields.entries()) {
    const name = cells[i];
    raw[name === undefined || name === '' ? `#${i + 1}` : name] = value;
  }
  return raw;
}

/**
 * A record too long to read (over `MAX_RECORD_CHARS`) as its refusal: one row, named by the column
 * that holds most of it, its sourceId kept when `sourceIdAt` was read whole (its fields are only
 * their first characters: `fields` are the data fields, `oversized` counts the file's own, which
 * in a report dropped back hold the report's columns first).
 */
export function oversizedEntry(
  row: { line: number; fields: readonly string[] },
  oversized: OversizedRecord,
  header: ResolvedHeader,
  sourceIdAt: number | undefined,
) {
  const dataIndex = (fileIndex: number) =>
    fileIndex - header.reportColumns.filter((column) => column < fileIndex).length;
  const longest = dataIndex(oversized.longest.index);
  const cut = new Set(oversized.cut.map(dataIndex));
  const whole = sourceIdAt !== undefined && !cut.has(sourceIdAt);
  const column = header.cells[longest] ?? '';
  const count = (n: number) => n.toLocaleString('en-US');
  const held = column === '' ? '' : `, ${count(oversized.longest.chars)} of them in "${column}"`;
  return {
    line: row.line,
    column,
    sourceId: whole ? trimmed(row.fields[sourceIdAt] ?? '') : '',
    reason:
      `the row is over 1 MiB (${count(oversized.chars)} characters${held}): a row may hold at most ` +
      `${count(MAX_RECORD_CHARS)} characters, so it was not read; shorten the value and drop the row again`,
    fields: [...row.fields],
  };
}
