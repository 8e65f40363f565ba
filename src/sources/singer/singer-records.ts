import type { SingerStreamSettings } from '../../config/singer-source-schema.js';
import type { RowProblem, SourceRecord } from '../../domain/records.js';
import { KIND_OF_STREAM } from '../../records/columns.js';
import { RECORD_BUILDERS, type RowIssue, type RowView } from '../../records/record-builders.js';
import type { RecordColumns } from './record-columns.js';
import type { JsonObject } from './singer-messages.js';

/** A stream's `skip` rule, compiled: whether a record's text in `column` makes it skipped. */
export interface SkipRule {
  column: string;
  hits(text: string): boolean;
}

/** A stream's `skip` rules (`equals` ignores case and spaces around, `matches` is a regex, `empty`). */
export function compileSkipRules(stream: SingerStreamSettings): readonly SkipRule[] {
  return stream.skip.map((rule) => {
    if (rule.equals !== undefined) {
      const equals = rule.equals.trim().toLowerCase();
      return { column: rule.column, hits: (text: string) => text.toLowerCase() === equals };
    }
    if (rule.empty) return { column: rule.column, hits: (text: string) => text === '' };
    const pattern = new RegExp(rule.matches!, 'iu');
    return { column: rule.column, hits: (text: string) => pattern.test(text) };
  });
}

/** One RECORD message to read, as the configuration names its stream's fields. */
export interface RecordToRead {
  streamName: string;
  stream: SingerStreamSettings;
  columns: RecordColumns;
  record: JsonObject;
  /** Where it came from, as a failure names it: the input's label and the stream, and the line. */
  file: string;
  line: number;
  /** What the stream's SCHEMA says is wrong with it (null: nothing, or no usable schema). */
  schemaProblem: string | null;
}

/**
 * The record one RECORD message gives, or the row problem that says everything wrong with it: the
 * schema's check and the record contract's, each named by the field the configuration reads. A
 * negative invoice of a stream with `negativeIsCreditNote` is read as a credit note.
 */
export function readRecord(input: RecordToRead): { record: SourceRecord } | { rejected: RowProblem } {
  const { streamName, stream, columns, record, line } = input;
  const view = columns.view(record);
  const issues: RowIssue[] = [];
  if (input.schemaProblem !== null) issues.push({ column: '', reason: input.schemaProblem });
  // A negative invoice as a credit note: the same record read with its amounts' signs turned.
  const credit = stream.negativeIsCreditNote && view.get('totalAmount').startsWith('-');
  const kind = credit ? 'creditNotes' : stream.kind;
  const built = RECORD_BUILDERS[kind](credit ? negatedAmounts(view) : view);
  issues.push(
    ...built.issues.map((i) => ({
      column: i.column === '' ? '' : columns.label(i.column),
      // A required column the configuration does not place: say where to place it.
      reason:
        i.column !== '' && columns.unnamed(i.column) && i.reason === 'required value is empty'
          ? `required value is empty: the record has no "${i.column}" field; name the field that holds it in streams.${streamName}.columns.${i.column}`
          : i.reason,
    })),
  );
  if (built.record !== null && issues.length === 0) return { record: built.record };
  const sourceId = view.get('sourceId');
  const named = issues.filter((i) => i.column !== '').map((i) => i.column);
  return {
    rejected: {
      kind: KIND_OF_STREAM[kind],
      sourceKey: sourceId !== '' ? sourceId : `${streamName}:line ${line}`,
      file: input.file,
      line,
      reason: issues.map((i) => (i.column === '' ? i.reason : `${i.column}: ${i.reason}`)).join('; '),
      ...(named.length > 0 ? { column: named.join('; ') } : {}),
      raw: rawOf(record),
    },
  };
}

/** A view whose amounts have their sign turned (`-297.50` -> `297.50`, `0` stays). */
function negatedAmounts(view: RowView): RowView {
  return {
    ...view,
    get(column) {
      const text = view.get(column);
      if (column !== 'totalAmount' && column !== 'taxAmount') return text;
      if (text.startsWith('-')) return text.slice(1);
      return /^[+]?[0.]*$/.test(text) ? text : `-${text}`;
    },
  };
}

/** A record's top-level fields as text, kept with a failure. */
function rawOf(record: JsonObject): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    raw[key] =
      value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  }
  return raw;
}
