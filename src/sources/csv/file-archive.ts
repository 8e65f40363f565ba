import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ResolvedHeader } from './columns.js';
import { ARCHIVE_DIR, type Placement, REPORT_DRAFT_SUFFIX } from './drop-folder.js';
import { type ReportEntry, writeErrorReport } from './error-report.js';
import { diskFullOr } from './errors.js';
import { createExclusive } from './exclusive-entries.js';
import {
  archiveDay,
  type ClaimedFile,
  type DropContext,
  isChanged,
  notePlanted,
  notePutBack,
} from './file-settlement.js';

/**
 * How a file read to its end leaves `.processing/` (see CsvFileUnit.complete): the report of its
 * failed rows is written whole first, beside it (`.processing/<key>.errors.csv.tmp`), flushed to
 * disk; only then is the file archived with it, as `archive/<day>/<name>` and `<name>.errors.csv`.
 * A full disk on the way (the report, or a copy into an `archive/` mounted from elsewhere) leaves
 * the file claimed and no report anywhere: the caller puts it back, the pass stops, and what it
 * says ("files and records stay where they were") is what happened. A file that changed since it
 * was claimed (its writer still had it open) is not archived but put back, to be read again whole.
 */

/** What a read file's report lists (see `writeErrorReport`). */
export interface ReportContent {
  /** The file's header, with every warning on the file (unknown columns, a snapshot's note). */
  header: ResolvedHeader;
  /** The rows the source refused, in line order, with their fields. */
  refused: AsyncIterable<ReportEntry>;
  /** The rows that failed after the source, in line order (those with no line last). */
  downstream: AsyncIterable<ReportEntry>;
}

/**
 * Archives a claimed file that was read to its end (`rows` data rows), with its report when there
 * is one, and records it in the ledger. Returns once the file left `.processing/`: archived, or put
 * back in the drop folder when it changed since it was claimed (with a warning, nothing recorded).
 *
 * @throws CsvSourceError `CSV_DROP_DIR_FULL` (or the file system's error): the file is still
 * claimed and no part of its report is left
 */
export async function archiveRead(
  ctx: DropContext,
  file: ClaimedFile,
  rows: number,
  content: ReportContent | null,
): Promise<void> {
  const report = content === null ? null : await writeReportDraft(ctx, file, content);
  let placed: Placement;
  try {
    // The report goes by the archived file's name (`<name>.errors.csv`), taken with it.
    const companion = report === null ? undefined : { suffix: '.errors.csv', from: report.draft };
    placed = await ctx.folder.archive(file.name, archiveDay(ctx.clock), file.stamp, companion);
  } catch (error) {
    throw diskFullOr(error, `${file.name} could not be archived in ${join(ctx.folder.root, ARCHIVE_DIR)}`);
  } finally {
    if (report !== null) await rm(report.draft, { force: true });
  }
  // Changed since it was claimed (its writer still had it open): back in the drop folder.
  if (isChanged(placed)) return notePutBack(ctx, file.name, placed);
  const archivedPath = placed.path;
  notePlanted(ctx, file.name, placed);
  const reportPath = placed.companion ?? undefined;
  const failedRows = report?.failedRows ?? 0;
  await ctx.ledger.record({
    sourceId: ctx.sourceId,
    name: file.name,
    checksum: file.checksum,
    size: file.size,
    // 1 good row and 4 bad: `partial`; `failed` only when no row went through.
    status: failedRows === 0 ? 'done' : failedRows < rows ? 'partial' : 'failed',
    rows,
    failedRows,
    archivedPath,
    ...(reportPath === undefined ? {} : { reportPath }),
    claimedAt: file.claimedAt,
    finishedAt: ctx.clock.now(),
  });
  ctx.log.info({ file: file.name, rows, failedRows, archivedPath, reportPath }, 'file archived');
}

/**
 * Writes the report into its draft, `.processing/<key>.errors.csv.tmp`, whole and flushed to disk:
 * the draft's path and the failed rows it lists. Nothing is left of it when it cannot be written.
 */
async function writeReportDraft(
  ctx: DropContext,
  file: ClaimedFile,
  content: ReportContent,
): Promise<{ draft: string; failedRows: number }> {
  const draft = ctx.folder.internalPath(file.name, REPORT_DRAFT_SUFFIX);
  try {
    // Read alongside for the fields of the rows that failed downstream: the claimed file itself.
    const failedRows = await writeErrorReport({
      out: await createExclusive(draft),
      ...content,
      csvPath: file.path,
    });
    return { draft, failedRows };
  } catch (error) {
    await rm(draft, { force: true });
    throw diskFullOr(error, `the report of ${file.name} could not be written in ${dirname(draft)}`);
  }
}
