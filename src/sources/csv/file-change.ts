import type { Stats } from 'node:fs';

/**
 * Whether a claimed file is still the file that was read. A writer that keeps its file open goes on
 * writing into it after a pass claimed it (the rename into `.processing/` does not close its
 * handle): what it appends after the read was never synced. So a file leaves `.processing/` for
 * `archive/` or `rejected/` only while its inode, size and modification time are those it had when
 * it was claimed; every read of it (checksum, rows, report) happened after the claim, so an
 * unchanged stamp means they all read the claimed content.
 */

/** What a file was when it was claimed: every write moves its mtime, an append its size. */
export interface ClaimStamp {
  size: number;
  mtimeMs: number;
  ino: number;
}

export const stampOf = (stats: Stats): ClaimStamp => ({
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  ino: stats.ino,
});

/** How the file changed since `claimed`, in words for a warning; null when it did not. */
export function changeSince(claimed: ClaimStamp, now: ClaimStamp): string | null {
  if (now.ino !== claimed.ino) return 'it was replaced by another file';
  if (now.size > claimed.size)
    return `it grew from ${claimed.size} to ${now.size} bytes after it was claimed`;
  if (now.size < claimed.size)
    return `it shrank from ${claimed.size} to ${now.size} bytes after it was claimed`;
  if (now.mtimeMs !== claimed.mtimeMs) return 'it was written to after it was claimed (same size)';
  return null;
}

/**
 * Thrown by a move that found its file changed since it was claimed (see `moveNoClobber`): the file
 * is still where it was, and nothing was left at the target.
 */
export class FileChangedError extends Error {
  constructor(readonly change: string) {
    super(`the file changed while it was processed: ${change}`);
    this.name = 'FileChangedError';
  }
}
