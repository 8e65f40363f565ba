import { join, relative } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import type { SeenDropFile } from '../../domain/drop-files.js';
import type { Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import { printable } from '../../logging/printable-text.js';
import type { DropFileLedger } from '../ports.js';
import {
  ARCHIVE_DIR,
  type ChangedClaim,
  type DropFolder,
  type PlacedFile,
  type Placement,
  REJECTED_DIR,
} from './drop-folder.js';
import { diskFullOr } from './errors.js';
import type { ClaimStamp } from './file-change.js';

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
  /** What the pass summary says of files beyond their units (see `Source.notices`). */
  notices: FileNotices;
}

/** The pass summary's record of files the source settled itself, and of what it met on the way. */
export interface FileNotices {
  /** The file was rejected before it was handed out as a unit (its header, a planted link). */
  refused(name: string, reason: string, where?: { stream: Stream; place: string | null }): void;
  warn(name: string, warning: string): void;
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
  /** Its inode, size and mtime when it was claimed: it is settled only while it keeps them. */
  stamp: ClaimStamp;
}

/** The archive folder of the day, by the injected clock, in UTC: `2026-01-15`. */
export const archiveDay = (clock: Clock): string => clock.now().toISOString().slice(0, 10);

/** Same content already synced: archive the file without reading a row. */
export async function archiveDuplicate(
  ctx: DropContext,
  file: ClaimedFile,
  previous: SeenDropFile,
): Promise<void> {
  let placed: Placement;
  try {
    placed = await ctx.folder.archive(file.name, archiveDay(ctx.clock), file.stamp);
  } catch (error) {
    throw diskFullOr(error, `${file.name} could not be archived in ${join(ctx.folder.root, ARCHIVE_DIR)}`);
  }
  if (isChanged(placed)) return notePutBack(ctx, file.name, placed);
  const archivedPath = placed.path;
  notePlanted(ctx, file.name, placed);
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
 * Moves an unreadable file to `rejected/` with `<name>.reason.txt` beside it: the reason on the
 * first line, then what identifies the file. The name and the reason (which may quote a header
 * cell) come from the file: their control characters are escaped, so each stays on its line.
 * Returns where it went; null when the file changed since it was claimed (a file still being
 * written reads as unreadable): put back in the drop folder, to be read again whole.
 */
export async function rejectFile(
  ctx: DropContext,
  file: ClaimedFile,
  reason: string,
  counts: { rows: number; failedRows: number } = { rows: 0, failedRows: 0 },
): Promise<string | null> {
  const finishedAt = ctx.clock.now();
  const text =
    `${printable(reason)}\n\nfile: ${printable(file.name)}\nsha256: ${file.checksum}\n` +
    `rejected at: ${finishedAt.toISOString()}\n`;
  let placed: Placement;
  try {
    placed = await ctx.folder.reject(file.name, file.stamp, text);
  } catch (error) {
    throw diskFullOr(error, `${file.name} could not be moved to ${join(ctx.folder.root, REJECTED_DIR)}`);
  }
  if (isChanged(placed)) {
    notePutBack(ctx, file.name, placed);
    return null;
  }
  const rejectedPath = placed.path;
  // `reject` always puts the companion: the reason file.
  const reportPath = placed.companion!;
  notePlanted(ctx, file.name, placed);
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

export const isChanged = (placement: Placement): placement is ChangedClaim => 'changed' in placement;

/**
 * Says, in the log and the pass summary, that a claimed file changed while the pass had it (its
 * writer still had it open): it went back to the drop folder instead of `archive/`, and the next
 * pass reads it again whole (the rows synced already cost nothing there).
 */
export function notePutBack(ctx: DropContext, name: string, placement: ChangedClaim): void {
  const warning =
    `changed while it was being synced (${placement.changed}): still being written? It went back to ` +
    'the drop folder and the next pass reads it again whole, the rows synced already at no cost. ' +
    'Write drop files under a .tmp or .part name and rename them once complete';
  ctx.log.warn(
    { file: name, change: placement.changed },
    'file changed after it was claimed (still being written?): put back in the drop folder to be read again whole',
  );
  ctx.notices.warn(name, warning);
}

/**
 * Says, in the log and the pass summary, which entries a file was settled around: the source never
 * makes a link or a folder where it puts a file, so one there was planted (to be written through).
 */
export function notePlanted(ctx: DropContext, name: string, placed: PlacedFile): void {
  if (placed.planted.length === 0) return;
  const warning =
    `${placed.planted.join(', ')} stood where the file was to go: left untouched, not written through; ` +
    `the file went to ${relative(ctx.folder.root, placed.path)}. receivables-sync never makes such an ` +
    'entry: remove it and check who can write the drop folder';
  ctx.log.warn(
    { file: name, planted: placed.planted, placedAt: placed.path },
    'an entry the source never makes stood where the file was to go: left untouched, the file took the next free name',
  );
  ctx.notices.warn(name, warning);
}
