import { randomBytes } from 'node:crypto';
import { constants, type Dirent } from 'node:fs';
import { type FileHandle, link, lstat, open, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createExclusive } from './exclusive-create.js';
import { type ClaimStamp, changeSince, FileChangedError, stampOf } from './file-change.js';

/**
 * A file put on another file system: `archive/` or `rejected/` may be a mount of its own (a network
 * share), where `rename` and `link` fail with EXDEV. The file is copied into a scratch file beside
 * the target (on the target's file system), flushed to disk, then linked to its name: the name never
 * holds a cut copy, and the original is only removed by the caller once the copy is whole and in
 * place. A copy cut short (a full disk, a crash) leaves the original as it was; the scratch file is
 * removed at once, or, after a crash, by the next pass (`removeStaleCopies`).
 *
 * Nothing is followed: the original is opened with O_NOFOLLOW, the scratch file is created with
 * O_EXCL|O_NOFOLLOW, and the target's name is taken with `link` (which neither follows nor replaces
 * what is there).
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** How the scratch files of copies under way end: `.<random>.copying`, hidden from the folder's listing. */
export const COPY_SUFFIX = '.copying';

/** A scratch file untouched this long belongs to a copy that was cut short (every write touches it). */
export const STALE_COPY_MS = 5 * 60_000;

const CHUNK = 1 << 20;

const READ_NO_FOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW;

/** Hard links not supported by the file system (some network shares, FAT): a rename stands in. */
export const NO_LINKS: ReadonlySet<string> = new Set(['EPERM', 'ENOTSUP', 'ENOSYS']);

export interface CopyProps {
  from: string;
  /** The name to give the copy; an entry there (a link included) is never replaced: EEXIST. */
  target: string;
  /** A folder on the target's file system for the copy while it is made (default: the target's). */
  scratchDir?: string;
  /** What `from` must still be once copied; else FileChangedError, and no copy is left. */
  expected?: ClaimStamp;
}

/**
 * Copies `from` to `target` whole, flushed to disk, keeping `from`. The copy keeps the original's
 * modification time (where the file system allows it).
 *
 * @throws EEXIST when `target` is taken; FileChangedError when `from` is not as `expected`; the
 * file system's error (ENOSPC...) when the copy cannot be made: nothing is left at `target`
 */
export async function copyWhole(props: CopyProps): Promise<void> {
  const { from, target, expected } = props;
  const source = await open(from, READ_NO_FOLLOW);
  try {
    const before = await source.stat();
    if (!before.isFile()) throw Object.assign(new Error(`${from} is not a regular file`), { code: 'EINVAL' });
    const scratch = join(
      props.scratchDir ?? dirname(target),
      `.${randomBytes(8).toString('hex')}${COPY_SUFFIX}`,
    );
    const out = await createExclusive(scratch);
    try {
      const copied = await copyBytes(source, out);
      await out.sync();
      await out.utimes(before.atime, before.mtime).catch(() => undefined);
      await out.close();
      const after = stampOf(await source.stat());
      const change = expected ? changeSince(expected, after) : null;
      if (change !== null) throw new FileChangedError(change);
      if (copied !== after.size)
        throw new FileChangedError(`it changed while it was copied (${copied} of ${after.size} bytes)`);
      await linkNoClobber(scratch, target);
      await syncFolder(dirname(target));
    } finally {
      await out.close().catch(() => undefined);
      await rm(scratch, { force: true });
    }
  } finally {
    await source.close();
  }
}

async function copyBytes(source: FileHandle, out: FileHandle): Promise<number> {
  const buffer = Buffer.allocUnsafe(CHUNK);
  let position = 0;
  for (;;) {
    const { bytesRead } = await source.read(buffer, 0, CHUNK, position);
    if (bytesRead === 0) return position;
    let written = 0;
    while (written < bytesRead) {
      const { bytesWritten } = await out.write(buffer, written, bytesRead - written, position + written);
      written += bytesWritten;
    }
    position += bytesRead;
  }
}

/**
 * Gives `scratch` the name `target` without replacing anything there: `link` fails with EEXIST; on a
 * file system without hard links, check-then-rename (a race only between two processes settling the
 * same name at once). The caller removes `scratch`.
 */
async function linkNoClobber(scratch: string, target: string): Promise<void> {
  try {
    await link(scratch, target);
    return;
  } catch (error) {
    if (!NO_LINKS.has(errnoOf(error) ?? '')) throw error;
  }
  if ((await lstat(target).catch(() => null)) !== null)
    throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
  await rename(scratch, target);
}

/** Flushes a folder's entries (the new name) to disk; a file system that cannot is left as it is. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY).catch(() => null);
  if (handle === null) return;
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

/**
 * Removes the scratch files of copies cut short in `dir` (a process killed mid-copy): regular files
 * named `.<…>.copying` that nothing wrote to for STALE_COPY_MS. A live copy writes to its file all
 * along, so it is never taken for one. Returns the names removed.
 */
export async function removeStaleCopies(dir: string, nowMs: number): Promise<string[]> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return [];
    throw error;
  }
  const removed: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.startsWith('.') || !entry.name.endsWith(COPY_SUFFIX)) continue;
    const path = join(dir, entry.name);
    const stats = await lstat(path).catch(() => null);
    if (stats === null || !stats.isFile() || nowMs - stats.mtimeMs <= STALE_COPY_MS) continue;
    await rm(path, { force: true });
    removed.push(entry.name);
  }
  return removed;
}
