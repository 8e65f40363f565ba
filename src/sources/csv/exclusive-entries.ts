import type { Stats } from 'node:fs';
import { link, lstat, rename, unlink } from 'node:fs/promises';
import { copyWhole, NO_LINKS } from './cross-device-copy.js';
import { type ClaimStamp, changeSince, FileChangedError, stampOf } from './file-change.js';

/**
 * Entries of the drop folder made without following or replacing anything. The drop folder is
 * writable by whoever drops files, so any name the source is about to use may already hold a
 * symbolic link planted to make it write or move a file elsewhere: files are created with
 * O_CREAT|O_EXCL|O_NOFOLLOW and moved with `link` (which neither follows nor replaces its target),
 * and a name found taken is reported, never reused. A move to another file system copies
 * (`cross-device-copy.ts`) under the same rules.
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

export { createExclusive } from './exclusive-create.js';

export interface MoveOptions {
  /**
   * What the file must still be when it leaves `from` (a claimed file: as it was claimed). A file
   * found changed stays at `from`, nothing is left at `target`: FileChangedError.
   */
  expected?: ClaimStamp;
  /** A folder on the target's file system for a copy under way (see `copyWhole`). */
  scratchDir?: string;
}

/**
 * Moves `from` to `target`, never replacing an existing entry: `link` fails with EEXIST where
 * `rename` would silently overwrite, and a link at `target` is not followed. On a file system
 * without hard links it falls back to check-then-rename (a race only between two processes
 * settling the same name the same second). To another file system (EXDEV: `archive/` on a share
 * of its own), the file is copied whole and flushed to disk first, then removed (`copyWhole`): a
 * copy that fails half-way leaves the file where it was.
 *
 * @throws FileChangedError when the file is not as `options.expected` (it stays at `from`)
 */
export async function moveNoClobber(from: string, target: string, options: MoveOptions = {}): Promise<void> {
  const { expected } = options;
  try {
    await link(from, target);
  } catch (error) {
    const code = errnoOf(error) ?? '';
    if (code === 'EXDEV') return copyThenRemove(from, target, options);
    if (!NO_LINKS.has(code)) throw error;
    return renameNoClobber(from, target, options);
  }
  // Both names are the one file now: checked as late as can be, then the old name goes.
  const change = expected ? changeSince(expected, stampOf(await lstat(target))) : null;
  if (change !== null) {
    await unlink(target);
    throw new FileChangedError(change);
  }
  await unlink(from);
}

async function renameNoClobber(from: string, target: string, options: MoveOptions): Promise<void> {
  const { expected } = options;
  if ((await lstatOrNull(target)) !== null)
    throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
  try {
    await rename(from, target);
  } catch (error) {
    if (errnoOf(error) === 'EXDEV') return copyThenRemove(from, target, options);
    throw error;
  }
  const change = expected ? changeSince(expected, stampOf(await lstat(target))) : null;
  if (change !== null) {
    await rename(target, from);
    throw new FileChangedError(change);
  }
}

/** The copy checked against `expected` once whole, as late as can be before the original goes. */
async function copyThenRemove(from: string, target: string, options: MoveOptions): Promise<void> {
  await copyWhole({ from, target, ...options });
  await unlink(from);
}

/**
 * Puts a copy of `from` at `target`, keeping `from`: a second name for it on the same file system
 * (`link`), a whole copy on another (`copyWhole`). Never replaces what is at `target` (EEXIST).
 */
export async function placeCopy(from: string, target: string, scratchDir?: string): Promise<void> {
  try {
    await link(from, target);
  } catch (error) {
    const code = errnoOf(error) ?? '';
    if (code !== 'EXDEV' && !NO_LINKS.has(code)) throw error;
    await copyWhole({ from, target, scratchDir });
  }
}

/** What is at `path` itself (a link is not followed); null when nothing is. */
export async function lstatOrNull(path: string): Promise<Stats | null> {
  try {
    return await lstat(path);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
}

/** `a symbolic link`, `a folder`, `a file`... as a message names an entry. */
export function entryKind(stats: Stats): string {
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isFile()) return 'a file';
  return 'a special file (FIFO, socket or device)';
}
