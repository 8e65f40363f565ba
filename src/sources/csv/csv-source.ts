import { realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import type { SourceConfig } from '../../config/schema.js';
import type { Clock } from '../../domain/clock.js';
import type { Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { DropFileLedger } from '../ports.js';
import type { RefusedUnit, Source, SourceNotices, SourceUnit } from '../source.js';
import { AccountValues } from './account-values.js';
import { assertValidMapping } from './columns.js';
import { CsvFileUnit } from './csv-file-unit.js';
import { DropFolder, PROCESSING_DIR, type RootFileStamp } from './drop-folder.js';
import { DuplicateFileUnit } from './duplicate-file-unit.js';
import { kindFormat } from './file-format.js';
import { inspectFile } from './file-inspection.js';
import { readability } from './file-readability.js';
import {
  DEFAULT_FILE_PATTERNS,
  fileKinds,
  ignoredDropFiles,
  orderDropFiles,
  StabilityTracker,
} from './file-selection.js';
import { type ClaimedFile, type DropContext, type FileNotices, rejectFile } from './file-settlement.js';
import { correctionsOnly, snapshotOf } from './snapshot-files.js';

export type CsvSourceConfig = Extract<SourceConfig, { type: 'csv' }>;

export interface CsvSourceProps {
  /** The `sources[]` entry: `dropDir`, `stableSeconds`, `mapping` (your header -> contract column). */
  config: CsvSourceConfig;
  /** "Now", compared with file mtimes, and the date of the archive folder. */
  clock: Clock;
  logger: Logger;
  /** Remembers every file taken, by checksum, to recognise the same content dropped twice. */
  ledger: DropFileLedger;
  /** Rows (records + refused rows) per batch; default 500. */
  batchSize?: number;
  /**
   * Read only (`sync --dry-run`): files are read in place, never claimed, moved or recorded;
   * duplicates and unreadable files are only reported. Default false.
   */
  dryRun?: boolean;
}

/** What the last pass did with the files it looked at, by name. */
export interface CsvPassSummary {
  /** Handed out as units. */
  taken: string[];
  /** Same content already synced: archived without syncing. */
  duplicates: string[];
  /** Unreadable before any row was used (encoding, header): moved to `rejected/`. */
  rejected: string[];
  /** Not complete yet (modified less than `stableSeconds` ago): left for a later pass. */
  waiting: string[];
  /** Claimed by another process meanwhile, or changed while being claimed. */
  skipped: string[];
  /** Left in `.processing/` by a process that died; put back in the drop folder and taken again. */
  recovered: string[];
  /** Set aside without being handed out (the `rejected` ones, a name too long to work on), with why. */
  refused: RefusedUnit[];
  /** What the pass met on the way: entries planted in the drop folder, gone around. */
  warnings: Array<{ unit: string; warning: string }>;
  /** Files of the drop folder's root whose names match no kind (`files:`): left where they are. */
  ignored: string[];
}

export interface CsvSource extends Source {
  readonly type: 'csv';
  /** The summary of the latest (or running) pass. */
  lastPass(): CsvPassSummary;
}

/**
 * The CSV drop folder source. Each pass lists the folder's root, keeps the files named
 * `accounts*.csv`, `invoices*.csv`, `credit-notes*.csv` (any case) in stream then name order, and
 * for each complete one: claims it (rename into `.processing/`), checksums it, and hands it out as a
 * unit unless it is a duplicate or unreadable. Files are claimed one at a time, as the engine asks
 * for the next unit, so a pass stopped early leaves the rest in place.
 *
 * @example
 *   const source = createCsvSource({ config, clock: systemClock, logger, ledger });
 *   for await (const unit of source.units()) {
 *     for await (const batch of unit.batches()) await sync(batch);
 *     await unit.complete({ failures });
 *   }
 */
export function createCsvSource(props: CsvSourceProps): CsvSource {
  const { config, clock, ledger } = props;
  assertValidMapping(config.id, config.mapping);
  const batchSize = props.batchSize ?? 500;
  const dryRun = props.dryRun ?? false;
  const kindOf = fileKinds(config.files);
  const folder = new DropFolder(resolve(config.dropDir), clock, kindOf);
  // The caller binds the source id to its logger (one child per source, made where sources are built).
  const log = props.logger;
  const stability = new StabilityTracker(config.stableSeconds);
  let summary = emptySummary();
  const notices: FileNotices = {
    refused: (unit, reason, where) => summary.refused.push({ unit, reason, ...where }),
    warn: (unit, warning) => summary.warnings.push({ unit, warning }),
  };
  const ctx: DropContext = { sourceId: config.id, dryRun, folder, ledger, clock, log, notices };
  // The accounts' values the documents' columns read (a due date from the account's payment days):
  // filled by the accounts files of a pass, read by its documents, emptied at the next pass.
  const accountValues = new AccountValues({
    patterns: config.files?.accounts ?? DEFAULT_FILE_PATTERNS.accounts,
    headerless: kindFormat(config, 'accounts').headerLine === null,
    columns: config.columns,
  });

  /** Checks a claimed file before any row is used; null when it was settled here. */
  async function prepare(
    name: string,
    stream: Stream,
    stamp: RootFileStamp,
    dropRealPath: string,
    laterFile?: string,
  ): Promise<CsvFileUnit | DuplicateFileUnit | null> {
    const path = dryRun ? join(folder.root, name) : folder.processingPath(name);
    const claimedAt = clock.now();
    const inspection = await inspectFile(path);
    const { checksum, size } = inspection;
    const file: ClaimedFile = { name, path, stream, checksum, size, claimedAt, stamp };
    const previous = await ledger.seen(config.id, checksum);
    const snapshot = snapshotOf(config.streams, stream, laterFile);
    if (snapshot.notes) log.info({ file: name, laterFile }, snapshot.notes[0]!);
    // A snapshot restates the whole set now: the same content as an earlier file is read again (its
    // unchanged rows cost no API call), so a customer back since, or deletions held then, are applied.
    // So are the files of a due date from the account's payment days (`AccountValues.readAgain`).
    const again = accountValues.readAgain(stream);
    if (
      previous !== null &&
      (previous.status === 'done' || previous.status === 'duplicate') &&
      snapshot.snapshot === undefined &&
      again === null
    ) {
      summary.duplicates.push(name);
      if (dryRun) log.info({ file: name, checksum }, 'duplicate file: would be archived without syncing');
      return new DuplicateFileUnit(ctx, file, previous);
    }
    if (previous !== null && again !== null) log.info({ file: name, again }, 'same content, read again');
    const resolution = await readability(
      { folder, dryRun, config, accountValues },
      { name, path, stream },
      inspection,
    );
    if (!resolution.ok) {
      if (dryRun) log.warn({ file: name, reason: resolution.reason }, 'file would be rejected');
      // Where it went (`rejected/<name>`, or the next free name when that one was taken).
      const rejectedPath = dryRun ? null : await rejectFile(ctx, file, resolution.reason);
      // Changed since it was claimed (still being written): put back, with a warning, not rejected.
      if (!dryRun && rejectedPath === null) return null;
      summary.rejected.push(name);
      const place = rejectedPath === null ? null : relative(folder.root, rejectedPath);
      notices.refused(name, resolution.reason, { stream, place });
      return null;
    }
    for (const warning of resolution.header.warnings) log.warn({ file: name, warning }, warning);
    log.debug({ file: name, checksum: file.checksum, size: file.size }, 'file claimed');
    // Lines less the header: blank lines and quoted line breaks make it an estimate (for progress).
    const headerLines = resolution.reading.headerLine === null ? 0 : 1;
    const expectedRecords = Math.max(0, inspection.lines - headerLines);
    return new CsvFileUnit({
      ctx,
      file,
      header: resolution.header,
      reading: resolution.reading,
      dropRealPath,
      batchSize,
      expectedRecords,
      ...(resolution.header.reportColumns.length > 0 && snapshot.snapshot
        ? correctionsOnly(stream, snapshot.notes)
        : snapshot),
    });
  }

  async function recoverStaleClaims(): Promise<void> {
    for (const { name, outcome } of await folder.recoverStaleClaims()) {
      if (outcome === 'recovered') {
        summary.recovered.push(name);
        log.warn(
          { file: name },
          'file left in .processing by an interrupted pass, put back to be taken again',
        );
      } else if (outcome === 'leftover') {
        log.info({ file: name }, 'file left by a pass cut short (a spool, a report or a copy) removed');
      } else if (outcome === 'blocked') {
        log.warn(
          { file: name },
          'file left in .processing by an interrupted pass, and a newer file of that name waits: move one of them',
        );
      } else {
        const warning = `${PROCESSING_DIR}/${name} is not a regular file (the source only ever moves files there): left untouched; remove it and check who can write the drop folder`;
        log.warn({ file: name }, 'an entry the source never makes sits in .processing: left untouched');
        notices.warn(name, warning);
      }
    }
  }

  /**
   * A file the source cannot work on by its name alone (its path too long for the file system
   * once in `.processing/`): left where it is and reported, so it holds up no other file.
   */
  function refuseByName(name: string, error: unknown): boolean {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || !NAME_ERRNOS.has(code)) return false;
    const reason = `the source cannot work on this file by its name (${code}): give it a shorter name (a shorter drop folder path helps too); it was left where it is`;
    const stream = kindOf(name);
    notices.refused(name, reason, stream === null ? undefined : { stream, place: null });
    log.warn({ file: name, code }, 'file left in the drop folder: its name cannot be worked on');
    return true;
  }

  async function* units(signal?: AbortSignal): AsyncGenerator<SourceUnit> {
    summary = emptySummary();
    accountValues.clear();
    // Before anything is moved: a working folder replaced by a link fails the pass, naming it.
    await folder.checkWorkingFolders();
    if (!dryRun) await recoverStaleClaims();
    const names = await folder.listRootFiles();
    stability.retainOnly(new Set(names));
    const dropRealPath = await realpath(folder.root);
    let current: CsvFileUnit | DuplicateFileUnit | null = null;
    let finished = false;
    const ordered = orderDropFiles(names, kindOf);
    summary.ignored = ignoredDropFiles(names, kindOf);
    for (const name of summary.ignored)
      log.debug({ file: name }, 'file matches no kind (files:), left in the drop folder');
    try {
      for (const [at, { name, stream }] of ordered.entries()) {
        if (signal?.aborted) break;
        let stamp: RootFileStamp | null;
        try {
          stamp = await claim(name);
          if (stamp === null) continue;
        } catch (error) {
          if (refuseByName(name, error)) continue;
          throw error;
        }
        // Only the last file of a kind the pass lists is a snapshot (see `snapshotOf`).
        const laterFile = ordered.findLast((f, i) => i > at && f.stream === stream)?.name;
        try {
          current = await prepare(name, stream, stamp, dropRealPath, laterFile);
        } catch (error) {
          // An I/O fault, not bad data: put the file back for the next pass.
          if (!dryRun) await folder.release(name).catch(() => undefined);
          if (refuseByName(name, error)) continue;
          throw error;
        }
        if (current !== null) {
          if (current instanceof CsvFileUnit) summary.taken.push(name);
          yield current;
        }
      }
      finished = true;
    } finally {
      // The engine stopped mid-pass (it threw, or broke out of the loop) before settling the unit
      // it held: put that file back rather than leave it claimed until this process exits.
      if (!finished && current !== null && !current.settled) {
        await current.release().catch((error: unknown) => {
          log.error({ file: current?.name, err: error }, 'could not put an unfinished file back');
        });
      }
    }
  }

  /**
   * Checks that a file is complete and claims it (in a dry run, only the former): its stamp as
   * claimed, or null when it is not taken.
   */
  async function claim(name: string): Promise<RootFileStamp | null> {
    const stamp = await folder.stampOf(name);
    if (stamp === null) return null;
    if (!stability.isComplete(name, stamp, clock.now().getTime())) {
      summary.waiting.push(name);
      log.debug(
        { file: name, stableSeconds: config.stableSeconds },
        'file not complete yet, left for a later pass',
      );
      return null;
    }
    const claimed = dryRun ? 'claimed' : await folder.claim(name, stamp);
    if (claimed !== 'claimed') {
      summary.skipped.push(name);
      log[claimed === 'busy' ? 'warn' : 'debug'](
        { file: name, claim: claimed },
        claimSkippedMessage[claimed],
      );
      return null;
    }
    stability.forget(name);
    return stamp;
  }

  return {
    id: config.id,
    type: 'csv',
    units,
    lastPass: () => summary,
    notices: (): SourceNotices => ({
      refused: summary.refused,
      warnings: summary.warnings,
      ignored: summary.ignored,
    }),
    waiting: () => ({ files: [...new Set(summary.waiting)], stableSeconds: config.stableSeconds }),
  };
}

const claimSkippedMessage = {
  gone: 'file claimed by another process',
  busy: 'a file of that name is still in .processing; this one waits for it to finish',
  changed: 'file changed while being claimed, left for a later pass',
} as const;

const emptySummary = (): CsvPassSummary => ({
  taken: [],
  duplicates: [],
  rejected: [],
  waiting: [],
  skipped: [],
  recovered: [],
  refused: [],
  warnings: [],
  ignored: [],
});

/** Errors that say a file's name (its path) cannot be worked on, not that the file system is failing. */
const NAME_ERRNOS: ReadonlySet<string> = new Set(['ENAMETOOLONG']);
