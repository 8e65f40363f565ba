import type { AccountRecord, RecordOrigin, RowProblem, SourceRecord, Stream } from '../../domain/records.js';
import { CONTRACT_COLUMNS, KIND_OF_STREAM } from '../../records/columns.js';
import { checkTimestamp } from '../../records/field-validators.js';
import { resolvePdf } from '../../records/pdf-file.js';
import { RECORD_BUILDERS, type RowIssue } from '../../records/record-builders.js';
import { minimalTombstone } from '../../records/tombstone.js';
import { rowViewOf, textOf } from '../../records/typed-values.js';
import { isoTimestamp, isTruthyFlag } from './row-values.js';
import type { StreamSettings } from './sql-settings.js';

/**
 * Turns the rows of a stream's query into records, with the CSV source's validators: the same
 * contract columns, the same reasons. Column names match the contract case-insensitively, since
 * Postgres folds unquoted aliases to lower case (`as sourceId` arrives as `sourceid`; MySQL keeps
 * the case written).
 */

/** Where each column the stream needs sits in the query's result. */
export interface StreamColumns {
  /** Contract column -> result field name. Absent optional columns are absent here. */
  contract: ReadonlyMap<string, string>;
  ts: string;
  id: string;
  deleted: string | null;
  /** Result fields that are neither contract, cursor nor tombstone columns: ignored. */
  unknown: string[];
}

export type ColumnsResolution = { ok: true; columns: StreamColumns } | { ok: false; reason: string };

/** Matches a result's field names to the stream's needs; a missing required column is an error. */
export function resolveColumns(
  stream: Stream,
  fields: readonly string[],
  settings: StreamSettings,
): ColumnsResolution {
  const byLower = new Map(fields.map((f) => [f.toLowerCase(), f]));
  const missing: string[] = [];
  const contract = new Map<string, string>();
  for (const spec of CONTRACT_COLUMNS[stream]) {
    const field = fields.includes(spec.name) ? spec.name : byLower.get(spec.name.toLowerCase());
    if (field !== undefined) contract.set(spec.name, field);
    else if (spec.required) missing.push(`"${spec.name}"`);
  }
  const exact = (name: string, role: string): string | null => {
    if (fields.includes(name)) return name;
    const near = byLower.get(name.toLowerCase());
    missing.push(
      `${role} "${name}"${near ? ` (the query returns "${near}": names are case-sensitive here)` : ''}`,
    );
    return null;
  };
  const [tsName, idName] = settings.cursorColumns;
  const ts = exact(tsName, 'cursor column');
  const id = exact(idName, 'cursor column');
  const deleted = settings.deletedColumn ? exact(settings.deletedColumn, 'deletedColumn') : null;
  if (missing.length > 0 || ts === null || id === null) {
    return {
      ok: false,
      reason:
        `the ${stream} query returns no column ${missing.join(', ')}; alias your columns to the contract's ` +
        `names, quoted (select name as "fullName", ...) and return the cursor columns`,
    };
  }
  const used = new Set([...contract.values(), ts, id, ...(deleted ? [deleted] : [])]);
  return { ok: true, columns: { contract, ts, id, deleted, unknown: fields.filter((f) => !used.has(f)) } };
}

export type ConvertedRow =
  | { type: 'record'; record: SourceRecord; origin: RecordOrigin }
  | { type: 'rejected'; problem: RowProblem }
  /** A tombstone the stream does not act on (documents; accounts with `onDelete: skip`). */
  | { type: 'tombstone-skipped'; sourceKey: string };

export interface RowConverterProps {
  stream: Stream;
  settings: StreamSettings;
  columns: StreamColumns;
  /** The real path of `filesDir`, or null when the source has none (then `file` must be empty). */
  filesRealPath: string | null;
  /** Where zone-less timestamps are (the source's `timeZone`; default UTC). */
  timeZone?: string;
}

/** Converts one row; pure but for the PDF check of a non-empty `file` column. */
export async function convertRow(
  props: RowConverterProps,
  row: Readonly<Record<string, unknown>>,
): Promise<ConvertedRow> {
  const { stream, settings, columns } = props;
  const raw = (column: string): unknown => {
    const field = columns.contract.get(column);
    if (column === 'updatedAt') {
      if (field !== undefined) {
        const value = row[field];
        return typeof value === 'string' ? isoTimestamp(value, props.timeZone) : value;
      }
      // No updatedAt column: the cursor's timestamp is the record's last update when it is one.
      const iso = isoTimestamp(textOf(row[columns.ts], column), props.timeZone);
      return checkTimestamp(iso).ok ? iso : null;
    }
    return field === undefined ? null : row[field];
  };
  const view = rowViewOf(raw);
  const idText = textOf(row[columns.id], columns.id);
  const origin: RecordOrigin = { file: `${stream} ${columns.id}=${idText}` };
  const sourceId = view.get('sourceId');
  const sourceKey = sourceId !== '' ? sourceId : `${stream}:${columns.id}=${idText}`;
  const tombstone = columns.deleted !== null && isTruthyFlag(row[columns.deleted]);
  if (tombstone && (stream !== 'accounts' || settings.onDelete === 'skip')) {
    return { type: 'tombstone-skipped', sourceKey };
  }

  const built = RECORD_BUILDERS[stream](view);
  const issues: RowIssue[] = [...built.issues];
  let file: string | null = null;
  const fileText = stream === 'accounts' ? '' : view.get('file');
  if (fileText !== '') {
    if (props.filesRealPath === null) {
      issues.push({
        column: 'file',
        reason: 'a file needs the source\'s "filesDir" (the folder the paths are relative to)',
      });
    } else {
      const pdf = await resolvePdf(props.filesRealPath, fileText);
      if (pdf.ok) file = pdf.value;
      else issues.push({ column: 'file', reason: pdf.reason.replaceAll('drop folder', 'filesDir') });
    }
  }

  if (tombstone && settings.onDelete === 'unlink' && sourceId !== '') {
    // Unlinking needs only the key: a deleted row whose other columns were emptied still unlinks.
    const record: AccountRecord =
      built.record?.kind === 'account'
        ? { ...built.record, deleted: true }
        : minimalTombstone(sourceId, view.get);
    return { type: 'record', record, origin };
  }
  if (built.record !== null && issues.length === 0) {
    let record: SourceRecord = built.record.kind === 'account' ? built.record : { ...built.record, file };
    if (tombstone && record.kind === 'account')
      record = withTag(record, settings.deletedTag ?? 'deleted-in-source');
    return { type: 'record', record, origin };
  }
  const problem: RowProblem = {
    kind: KIND_OF_STREAM[stream],
    sourceKey,
    file: origin.file!,
    reason: issues.length === 1 ? issues[0]!.reason : issues.map(describeIssue).join('; '),
    raw: Object.fromEntries(Object.entries(row).map(([k, v]) => [k, textOf(v, k)])),
  };
  const column = issues
    .map((i) => i.column)
    .filter((c) => c !== '')
    .join('; ');
  if (column !== '') problem.column = column;
  return { type: 'rejected', problem };
}

function withTag(record: AccountRecord, tag: string): AccountRecord {
  const has = record.tags.some((t) => t.toLowerCase() === tag.toLowerCase());
  return has ? record : { ...record, tags: [...record.tags, tag] };
}

const describeIssue = (issue: RowIssue): string =>
  issue.column === '' ? issue.reason : `${issue.column}: ${issue.reason}`;
