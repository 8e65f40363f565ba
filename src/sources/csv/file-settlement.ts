import { writeFile } from 'node:fs/promises';
import type { Clock } from '../../domain/clock.js';
import type { SeenDropFile } from '../../domain/drop-files.js';
import type { Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { DropFileLedger } from '../ports.js';
import type { DropFolder } from './drop-folder.js';

/**
 * The two ways a claimed file leaves `.processing/` without being synced: recognised as a
 * duplicate (archived) or unreadable (moved to `rejected/` with the reason). Shared by the source
 * (checks before a unit is handed out) and the unit (`abandon`).
 */
export interface DropContext {
  sourceId: string;
  /** Read only: nothing is claimed, moved, written or recorded. */
  dryRun: boolean;
  folder: DropFolder;
  ledger: DropFileLedger;
  clock: Clock;
  log: Logger;
}

/** A file this process claimed: it sits in `.processing/<name>` (a dry run reads it in place). */
export interface ClaimedFile {
  name: string;
  /** Where it is read from. */
  path: string;
  stream: Stream;
  checksum: string;
  size: number;
  claimedAt: Date;
}

/** The archive folder of the day, by the injected clock, in UTC: `2026-01-15`. */
export const archiveDay = (clock: Clock): string => clock.now().toISOString().slice(0, 10);

/** Same content already synced: archive the file without reading a row. */
export async function archiveDuplicate(
  ctx: DropContext,
  file: ClaimedFile,
  previous: SeenDropFile,
): Promise<void> {
  const archivedPath = await ctx.folder.archive(file.name, archiveDay(ctx.clock));
  await ctx.ledger.record({
    sourceId: ctx.sourceId,
    name: file.name,
    checksum: file.checksum,
    size: file.size,
    status: 'duplicate',
    // The original's counts: the rows a duplicate holds were synced (or failed) with it.
    rows: previous.rows,
    failedRows: previous.failedRows,
    archivedPath,
    claimedAt: file.claimedAt,
    finishedAt: ctx.clock.now(),
  });
  ctx.log.info(
    { file: file.name, checksum: file.checksum, archivedPath, firstArchivedPath: previous.archivedPath },
    'duplicate file archived without syncing',
  );
}

/**
 * Moves an unreadable file to `rejected/` and writes `<name>.reason.txt` beside it: the reason on
 * the first line, then what identifies the file.
 */
export async function rejectFile(
  ctx: DropContext,
  file: ClaimedFile,
  reason: string,
  counts: { rows: number; failedRows: number } = { rows: 0, failedRows: 0 },
): Promise<string> {
  const rejectedPath = await ctx.folder.reject(file.name);
  const reportPath = `${rejectedPath}.reason.txt`;
  const finishedAt = ctx.clock.now();
  await writeFile(
    reportPath,
    `${reason}\n\nfile: ${file.name}\nsha256: ${file.checksum}\nrejected at: ${finishedAt.toISOString()}\n`,
  );
  await ctx.ledger.record({
    sourceId: ctx.sourceId,
    name: file.name,
    checksum: file.checksum,
    size: file.size,
    status: 'rejected',
    rows: counts.rows,
    failedRows: counts.failedRows,
    error: reason,
    archivedPath: rejectedPath,
    reportPath,
    claimedAt: file.claimedAt,
    finishedAt,
  });
  ctx.log.warn({ file: file.name, reason, rejectedPath }, 'file rejected');
  return rejectedPath;
}
