import type { CsvSnapshotSettings } from '../../config/csv-source-schema.js';
import type { RecordOrigin, RowProblem, Stream } from '../../domain/records.js';
import { KIND_OF_STREAM } from '../../records/columns.js';
import { resolvePdf } from '../../records/pdf-file.js';
import type { DownstreamFailure, SourceBatch, SourceUnit, UnitOutcome, UnitSnapshot } from '../source.js';
import { dataFields, type ResolvedHeader } from './columns.js';
import { CsvParseFailure, type CsvRow, readCsvRows } from './csv-rows.js';
import { SPOOL_SUFFIXES } from './drop-folder.js';
import type { ReportEntry } from './error-report.js';
import { CsvSourceError } from './errors.js';
import { archiveRead } from './file-archive.js';
import type { FileReading } from './file-readability.js';
import { type ClaimedFile, type DropContext, rejectFile } from './file-settlement.js';
import { FirstSeenIndex } from './first-seen-index.js';
import { MojibakeWatch } from './mojibake.js';
import type { OversizedRecord } from './oversized-record.js';
import {
  type CheckedRow,
  checkRow,
  oversizedEntry,
  type RowCheckContext,
  type RowToCheck,
  rawRecord,
  refusalEntry,
} from './row-check.js';
import { isBlank, RowFields, trimmed } from './row-fields.js';
import { RowShaper } from './row-shaper.js';
import { UnitReport } from './unit-report.js';

export interface CsvFileUnitProps {
  ctx: DropContext;
  file: ClaimedFile;
  header: ResolvedHeader;
  /** The drop folder's realpath: `file` columns must resolve under it. */
  dropRealPath: string;
  batchSize: number;
  /** About how many data rows the file holds (its lines less the header), for progress. */
  expectedRecords?: number;
  /** Set when the file is the whole set of its kind (snapshot mode, and no later file of it). */
  snapshot?: CsvSnapshotSettings;
  /** What the user should know about the file besides its header's warnings. */
  notes?: readonly string[];
  /** Its encoding, delimiter, header line and row shape (default: the contract's format). */
  reading?: FileReading;
}

type State = 'new' | 'reading' | 'drained' | 'settled';

/**
 * One claimed CSV file as a unit of work: `batches()` streams its rows as validated records and
 * refused rows; `complete` archives it (with the report of failed rows); `abandon` rejects it;
 * `release` puts it back in the drop folder. In a dry run the file was never claimed: all three
 * leave it where it is.
 */
export class CsvFileUnit implements SourceUnit {
  readonly name: string;
  readonly stream: Stream;
  readonly expectedRecords?: number;
  readonly #props: CsvFileUnitProps;
  /** The rows refused here and those that failed after the source, spooled for the file's report. */
  readonly #report: UnitReport;
  /** sourceId -> the line it was first seen on: a second row with the same id is refused. */
  readonly #firstLineOf: FirstSeenIndex;
  /** `header.index` as an object: read for every value of every row, faster than the map. */
  readonly #positions: Readonly<Record<string, number>>;
  #state: State = 'new';
  #rows = 0;
  /** Turns a shaped file's rows into records-to-be (kinds, groups, derived accounts, skips). */
  readonly #shaper: RowShaper | null;
  /** What every row's check reads: the same for each row, so made once. */
  readonly #checkContext: RowCheckContext;
  /** Values that look encoded twice (`CafÃ©`): the first one, and how many; null when the bytes cannot hold one. */
  readonly #mojibake: MojibakeWatch | null;
  /** Why the file was not read whole (a parse failure, a row over 1 MiB without its sourceId), or null. */
  #incomplete: string | null = null;
  readonly snapshot?: UnitSnapshot;

  /** What the file's header says that the user should know (unknown columns): in the summary and the report. */
  get warnings(): readonly string[] {
    const { header, notes } = this.#props;
    const mojibake = this.#mojibake?.warning();
    const more = [...(notes ?? []), ...(mojibake ? [mojibake] : [])];
    return more.length > 0 ? [...header.warnings, ...more] : header.warnings;
  }

  /** Rows that made no record (skipped by `rows:` rules, or of a kind the file does not sync). */
  get skippedRows(): number {
    return this.#shaper?.skipped ?? 0;
  }

  /** True once the file was archived, rejected or released (or, in a dry run, the unit finished). */
  get settled(): boolean {
    return this.#state === 'settled';
  }

  constructor(props: CsvFileUnitProps) {
    this.#props = props;
    this.name = props.file.name;
    this.stream = props.file.stream;
    if (props.expectedRecords !== undefined) this.expectedRecords = props.expectedRecords;
    this.#firstLineOf = new FirstSeenIndex(props.expectedRecords);
    this.#positions = Object.fromEntries(props.header.index);
    this.#mojibake = props.reading?.mayBeEncodedTwice === false ? null : new MojibakeWatch();
    const shape = props.reading?.shape;
    this.#shaper = shape ? new RowShaper(shape) : null;
    this.#checkContext = {
      header: props.header,
      stream: this.stream,
      firstLineOf: this.#firstLineOf,
      grouped: shape?.group != null,
    };
    if (props.snapshot)
      this.snapshot = {
        ...props.snapshot,
        // Every sourceId of the file is in the index, from rows refused for a bad field too.
        holds: (key) => this.#firstLineOf.has(key),
        incomplete: () => this.#incomplete,
      };
    // Named by the file's key (a hash of a long name), beside it in `.processing/`.
    const spoolPath = (suffix: string) =>
      props.ctx.dryRun ? null : props.ctx.folder.internalPath(props.file.name, suffix);
    this.#report = new UnitReport(spoolPath(SPOOL_SUFFIXES[0]), spoolPath(SPOOL_SUFFIXES[1]));
  }

  async *batches(): AsyncGenerator<SourceBatch> {
    if (this.#state !== 'new')
      throw new CsvSourceError('CSV_UNIT_MISUSED', `${this.name}: batches() read twice`);
    this.#state = 'reading';
    const { batchSize } = this.#props;
    let batch: SourceBatch = { records: [], rejected: [] };
    const reading = this.#props.reading;
    // A file without a header (`headerLine: none`) is all rows, from its first line.
    const headerLine = reading ? (reading.headerLine ?? 1) : 1;
    let header = reading?.headerLine !== null;
    const options = reading ? { encoding: reading.encoding, delimiter: reading.delimiter } : {};
    reading?.accountValues?.values.fileRead(this.name);
    try {
      for await (const rows of readCsvRows(this.#props.file.path, options)) {
        // Each row is taken out of its slice's array as it is handled, so a young-generation
        // collection meets only the rows still to come: the handled ones are garbage by then,
        // not survivors to copy (a slice holds about 160 rows, 80 KB of their values).
        for (let read = rows.shift(); read !== undefined; read = rows.shift()) {
          if (read.line < headerLine) continue; // a report's title lines
          if (header) {
            header = false; // checked before the unit was handed out
            continue;
          }
          const fields = dataFields(this.#props.header, read.fields);
          const row = fields === read.fields ? read : { line: read.line, fields };
          if (isBlank(row.fields)) continue; // spreadsheets leave rows of empty cells
          this.#rows++;
          const waiting =
            read.oversized === undefined
              ? this.#take(row, batch)
              : this.#refuseOversized(row, read.oversized, batch);
          if (waiting !== undefined) await waiting;
          if (batch.records.length + batch.rejected.length >= batchSize) {
            yield batch;
            batch = { records: [], rejected: [] };
          }
        }
      }
    } catch (error) {
      if (!(error instanceof CsvParseFailure)) throw error;
      // The rows before the failure were read and go on; the rest of the file cannot be read.
      this.#rows++;
      const reason = `the file cannot be read from this line on, the rest of it was skipped: ${error.message}`;
      this.#incomplete = `line ${error.line} on could not be read`;
      await this.#refuse(batch, { line: error.line, column: '', sourceId: '', reason, fields: [] });
    }
    // The rows of the last grouped document make it now.
    for (const shaped of this.#shaper?.flush() ?? []) {
      const waiting = this.#takeRecord(shaped, batch);
      if (waiting !== undefined) await waiting;
    }
    if (batch.records.length + batch.rejected.length > 0) yield batch;
    this.#state = 'drained';
  }

  /** The failures of a batch after the source, for the file's report. */
  async failed(failures: readonly DownstreamFailure[]): Promise<void> {
    await this.#report.failed(failures);
  }

  async complete(outcome: UnitOutcome): Promise<void> {
    if (this.#state !== 'drained') {
      throw new CsvSourceError('CSV_UNIT_MISUSED', `${this.name}: complete() before batches() was drained`);
    }
    const { ctx, file } = this.#props;
    if (ctx.dryRun) {
      this.#state = 'settled';
      return;
    }
    // Failures not handed over batch by batch (a caller without `failed`) join the others here.
    await this.#report.failed(outcome.failures);
    await this.#report.close();
    const anyFailed = this.#report.anyFailed;
    const warnings = [...this.warnings, ...(outcome.notes ?? [])];
    const report =
      anyFailed || warnings.length > 0
        ? {
            header: { ...this.#props.header, warnings },
            refused: this.#report.refusedRows(),
            downstream: this.#report.failedRows(),
          }
        : null;
    // Throws while the file is still claimed (a full disk): the source puts it back then.
    await archiveRead(ctx, file, this.#rows, report);
    // Settled once the file left `.processing/` (archived, or put back when it changed meanwhile).
    this.#state = 'settled';
    await this.#report.discard();
  }

  async abandon(reason: string): Promise<void> {
    if (this.#state === 'settled') return;
    await this.#report.discard();
    if (!this.#props.ctx.dryRun)
      await rejectFile(this.#props.ctx, this.#props.file, reason, { rows: this.#rows, failedRows: 0 });
    // Only now: a file that could not be moved (a full disk) is still released by the source.
    this.#state = 'settled';
  }

  async release(): Promise<void> {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    await this.#report.discard();
    const { ctx, file } = this.#props;
    if (ctx.dryRun) return;
    // A rename keeps the mtime: the next pass takes the file again at once.
    await ctx.folder.release(file.name);
    ctx.log.info({ file: file.name }, 'file released back to the drop folder');
  }

  /**
   * A record too long to read (over 1 MiB): one refused row, with its line. Its sourceId, when it
   * was read whole, counts as any refused row's (a later row with it is a duplicate; a snapshot
   * holds it); without one, a snapshot cannot tell what the file lacks.
   */
  #refuseOversized(row: CsvRow, oversized: OversizedRecord, batch: SourceBatch): Promise<void> {
    // A shaped file finds its sourceId through its plan, not the header: such a row goes by its line.
    const at = this.#shaper === null ? this.#props.header.index.get('sourceId') : undefined;
    const entry = oversizedEntry(row, oversized, this.#props.header, at);
    const first = entry.sourceId === '' ? undefined : this.#firstLineOf.firstSeen(entry.sourceId, row.line);
    if (entry.sourceId === '')
      this.#incomplete ??= `line ${row.line} is a row over 1 MiB, its sourceId unread`;
    return this.#refuse(batch, entry, first !== undefined);
  }

  /** Takes a row into the batch; returns a promise only when it must wait (a PDF, a refusal to spool). */
  #take(row: CsvRow, batch: SourceBatch): Promise<void> | undefined {
    this.#mojibake?.check(row, this.#props.header.cells);
    if (this.#shaper === null) {
      const view = new RowFields(row.fields, this.#positions, this.#props.header.index);
      return this.#takeRecord({ kind: this.stream, view, line: row.line, fields: row.fields }, batch);
    }
    const made = this.#shaper.take(row);
    if (made.length === 0) return undefined;
    if (made.length === 1) return this.#takeRecord(made[0]!, batch);
    return made.reduce<Promise<void>>(
      (done, shaped) => done.then(() => this.#takeRecord(shaped, batch)),
      Promise.resolve(),
    );
  }

  #takeRecord(row: RowToCheck, batch: SourceBatch): Promise<void> | undefined {
    if (row.kind === 'accounts' && this.stream === 'accounts') this.#noteAccountValues(row);
    const checked = this.#check(row);
    if (checked.pdfText === '') return this.#settle(row, batch, checked, null);
    return resolvePdf(this.#props.dropRealPath, checked.pdfText).then((pdf) => {
      if (!pdf.ok) checked.issues.push({ column: 'file', reason: pdf.reason });
      return this.#settle(row, batch, checked, pdf.ok ? pdf.value : null);
    });
  }

  /**
   * An account row's values that document columns read (its payment days, for their due dates),
   * into the pass's table: whether or not the row is valid (a document of an account that failed
   * fails with the account's reason anyway).
   */
  #noteAccountValues(row: RowToCheck): void {
    const noted = this.#props.reading?.accountValues;
    if (!noted) return;
    const account = row.view.get('sourceId');
    if (account === '') return;
    for (const { ref, index } of noted.columns)
      noted.values.record(ref, account, {
        value: trimmed(row.fields[index] ?? ''),
        file: this.name,
        line: row.line,
      });
  }

  /** Everything that needs no file system: field count, values, duplicate sourceId. */
  #check(row: RowToCheck): CheckedRow {
    return checkRow(row, this.#checkContext);
  }

  #settle(
    row: RowToCheck,
    batch: SourceBatch,
    checked: CheckedRow,
    pdfPath: string | null,
  ): Promise<void> | undefined {
    const { record, issues } = checked;
    if (record !== null && issues.length === 0) {
      const origin: RecordOrigin = { file: this.name, line: row.line };
      // Documents carry the checked PDF's absolute path in place of the text the file gave.
      if (record.kind !== 'account') record.file = pdfPath;
      batch.records.push({ record, origin });
      return undefined;
    }
    const entry = refusalEntry(row, checked);
    // The valid first row owns the sourceId: a duplicate is keyed by its line, not to shadow it.
    return this.#refuse(batch, entry, checked.duplicate);
  }

  /** Refuses a row: into the batch for the engine, and into the spool for the report. */
  async #refuse(
    batch: SourceBatch,
    entry: ReportEntry & { line: number; fields: string[]; kind?: Stream },
    keyByLine = false,
  ): Promise<void> {
    const { file, header } = this.#props;
    const problem: RowProblem = {
      kind: KIND_OF_STREAM[entry.kind ?? file.stream],
      sourceKey: entry.sourceId !== '' && !keyByLine ? entry.sourceId : `${file.name}:${entry.line}`,
      file: file.name,
      line: entry.line,
      reason: entry.reason,
    };
    if (entry.column !== '') problem.column = entry.column;
    if (entry.fields.length > 0) problem.raw = rawRecord(header.cells, entry.fields);
    batch.rejected.push(problem);
    await this.#report.refuse(entry);
  }
}
