import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import type { SourceConfig } from '../config/schema.js';
import type { DateParts, RecordKind, Stream } from '../domain/records.js';
import { isoDateOf, STREAM_OF } from '../domain/records.js';
import { CONTRACT_COLUMNS } from '../records/columns.js';
import { neutralizedCell, REPORT_COLUMNS } from '../sources/csv/columns.js';
import { csvCell } from '../sources/csv/error-report.js';
import { describeSource } from '../sources/describe-source.js';
import type { StateDb } from '../state/database.js';
import { type ExportableFailure, FailureQueries } from '../state/failure-queries.js';

/** The name of a download: taken by the CSV source like any file of its kind (`invoices*.csv`). */
const FILE_PREFIX: Readonly<Record<Stream, string>> = {
  accounts: 'accounts',
  invoices: 'invoices',
  creditNotes: 'credit-notes',
};

const PAGE = 1_000;

/** A download of a source's open failures of one kind. */
export interface FailuresCsv {
  fileName: string;
  lines: AsyncIterable<string>;
}

/**
 * The open failures of one kind of a source as a CSV file in the drop folder's format: the layout
 * of a file's error report (`errors.line,errors.column,errors.reason`, then the row under the CSV
 * contract's columns), so it can be corrected and dropped back as it is (the CSV source leaves the
 * `errors.*` columns out and restores the cells neutralised against formula injection). Each row
 * is the failure's own: the row as read when the source refused it, the record as sent when the
 * API did, else the record as last synced, else only its source id. Read from the state DB page by
 * page, so a download of any size holds one page in memory.
 *
 * An invoice's `paidAmount` column is written only when some row gives a paid amount (a file
 * without the column leaves the service's paid amount alone; an empty cell would mean 0).
 */
export function failuresCsv(db: StateDb, source: SourceConfig, kind: RecordKind): FailuresCsv {
  const stream = STREAM_OF[kind];
  const queries = new FailureQueries(db);
  // A refused row is put back under the contract's columns through the source's header mapping, and
  // a PDF path made relative to its drop folder (a source without files has neither).
  const described = describeSource(source);
  const mapping = described.columnMapping;
  const dropDirs = described.dropDir === null ? [] : dropDirsOf(described.dropDir);
  const pages = async function* (): AsyncGenerator<ExportableFailure[]> {
    let after = '0';
    for (;;) {
      const page = await queries.exportPage(source.id, kind, after, PAGE);
      if (page.length === 0) return;
      yield page;
      after = page[page.length - 1]!.id;
    }
  };
  const lines = async function* (): AsyncGenerator<string> {
    let withPaid = false;
    if (stream === 'invoices')
      for await (const page of pages())
        if (page.some((f) => givesPaidAmount(rowOf(f, mapping, stream, dropDirs)))) {
          withPaid = true;
          break;
        }
    const columns = CONTRACT_COLUMNS[stream].map((c) => c.name).filter((c) => c !== 'paidAmount' || withPaid);
    // errors.file: the failures of several drops share one download, and their line numbers are the files'.
    yield csvLine(['errors.file', ...REPORT_COLUMNS, ...columns]);
    for await (const page of pages())
      for (const failure of page) {
        const row = rowOf(failure, mapping, stream, dropDirs);
        const reason = failure.apiCode ? `${failure.message} [${failure.apiCode}]` : failure.message;
        yield csvLine([
          failure.file ?? '',
          failure.line === null ? '' : String(failure.line),
          failure.column ?? '',
          reason,
          ...columns.map((c) => row.get(c) ?? ''),
        ]);
      }
  };
  return { fileName: `${FILE_PREFIX[stream]}-failures-${source.id}.csv`, lines: lines() };
}

const csvLine = (cells: readonly string[]): string =>
  `${cells.map((cell) => csvCell(neutralizedCell(cell))).join(',')}\r\n`;

const givesPaidAmount = (row: Map<string, string>): boolean => row.has('paidAmount');

/** The failure's row by contract column (a column absent from the map was absent from the row). */
function rowOf(
  failure: ExportableFailure,
  mapping: Readonly<Record<string, string>>,
  stream: Stream,
  dropDirs: readonly string[],
): Map<string, string> {
  const raw = failure.payload?.raw;
  if (isTextRecord(raw)) return rawRow(raw, mapping, stream);
  const record = failure.payload?.record ?? failure.lastSynced;
  if (isObject(record) && record.sourceId === failure.sourceKey) return recordRow(record, dropDirs);
  return new Map([['sourceId', failure.sourceKey]]);
}

/** A row as the source read it (header cell -> value), by contract column: `mapping` first, then the name. */
function rawRow(raw: Record<string, string>, mapping: Readonly<Record<string, string>>, stream: Stream) {
  const contract = new Map(CONTRACT_COLUMNS[stream].map((c) => [c.name.toLowerCase(), c.name]));
  const mapped = new Map(Object.entries(mapping).map(([from, to]) => [from.trim().toLowerCase(), to]));
  const row = new Map<string, string>();
  for (const [cell, value] of Object.entries(raw)) {
    const key = cell.trim();
    const target = mapping[key] ?? mapped.get(key.toLowerCase()) ?? key;
    const column = contract.get(target.trim().toLowerCase());
    if (column !== undefined && !row.has(column)) row.set(column, value);
  }
  return row;
}

/** A record as the engine had it, back in the CSV contract's columns. */
function recordRow(record: Record<string, unknown>, dropDirs: readonly string[]): Map<string, string> {
  const row = new Map<string, string>();
  const text = (column: string, value: unknown) => {
    if (typeof value === 'string') row.set(column, value);
    else if (value === null || value === undefined) row.set(column, '');
  };
  for (const column of [
    'sourceId',
    'fullName',
    'currencyCode',
    'accountSourceId',
    'number',
    'totalAmount',
    'taxAmount',
    'updatedAt',
  ])
    if (column in record) text(column, record[column]);
  for (const column of ['issuedDate', 'dueDate'])
    if (isObject(record[column])) row.set(column, isoDateOf(record[column] as unknown as DateParts));
  if ('billingAddress' in record) {
    const address = isObject(record.billingAddress) ? record.billingAddress : {};
    for (const part of ['street', 'city', 'postalCode', 'country'])
      text(`billingAddress.${part}`, address[part]);
  }
  if (Array.isArray(record.tags)) row.set('tags', record.tags.filter((t) => typeof t === 'string').join('|'));
  if ('file' in record)
    row.set('file', typeof record.file === 'string' ? inDropDir(record.file, dropDirs) : '');
  if (record.kind === 'invoice' && record.paidAmountUnknown !== true) text('paidAmount', record.paidAmount);
  return row;
}

/** A PDF's path as the `file` column takes it: relative to the drop folder. */
function inDropDir(file: string, dropDirs: readonly string[]): string {
  for (const dir of dropDirs) {
    const inside = relative(dir, file);
    if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) return inside.split('\\').join('/');
  }
  return file;
}

/** The drop folder as configured and as resolved (the source checks PDFs under its real path). */
function dropDirsOf(dropDir: string): string[] {
  const dirs = [resolve(dropDir)];
  try {
    dirs.unshift(realpathSync(dropDir));
  } catch {
    // Not there (any more): the configured path only.
  }
  return dirs;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isTextRecord = (value: unknown): value is Record<string, string> =>
  isObject(value) && Object.values(value).every((v) => typeof v === 'string');
