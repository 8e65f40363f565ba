import { constants, type Stats } from 'node:fs';
import { type FileHandle, link, lstat, open, rename, unlink } from 'node:fs/promises';

/**
 * Entries of the drop folder made without following or replacing anything. The drop folder is
 * writable by whoever drops files, so any name the source is about to use may already hold a
 * symbolic link planted to make it write or move a file elsewhere: files are created with
 * O_CREAT|O_EXCL|O_NOFOLLOW and moved with `link` (which neither follows nor replaces its target),
 * and a name found taken is reported, never reused.
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Creates `path` and opens it for writing. Fails with EEXIST when anything has the name, a
 * symbolic link included (even one to nowhere): nothing is written through or over it.
 */
export function createExclusive(path: string): Promise<FileHandle> {
  return open(path, CREATE_NEW, 0o666);
}

/**
 * Moves `from` to `target`, never replacing an existing entry: `link` fails with EEXIST where
 * `rename` would silently overwrite, and a link at `target` is not followed. On a file system
 * without hard links it falls back to check-then-rename (a race only between two processes
 * settling the same name the same second).
 */
export async function moveNoClobber(from: string, target: string): Promise<void> {
  try {
    await link(from, target);
    await unlink(from);
    return;
  } catch (error) {
    const code = errnoOf(error);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw error;
  }
  if ((await lstatOrNull(target)) !== null)
    throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
  await rename(from, target);
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
