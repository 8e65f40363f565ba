import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { link, rm, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/**
 * Files that say which process holds something (a CSV claim's lease, the embedded state DB's lock):
 * created whole and exclusively, holding JSON with at least `pid` and `host`, so another process can
 * tell a live holder from one that died.
 */

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * `wx` and never through a symbolic link: such files live in folders others may write (a CSV drop
 * folder's `.processing/`), where a link planted at the name must not be written through.
 */
const CREATE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Creates `path` holding `content`, or returns false when it exists. The content is written under a
 * temporary name first and linked into place (link() fails when the target exists): the file is
 * never seen empty, even when its process is killed between creating and writing it. A file system
 * without hard links falls back to an exclusive create (`wx`). Anything at `path`, a symbolic link
 * included, makes it return false: nothing is written through or over it.
 */
export async function createWhole(path: string, content: string): Promise<boolean> {
  const temporary = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { flag: CREATE_NEW });
    await link(temporary, path);
    return true;
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS') throw error;
  } finally {
    await rm(temporary, { force: true });
  }
  try {
    await writeFile(path, content, { flag: CREATE_NEW });
    return true;
  } catch (error) {
    if (errnoOf(error) === 'EEXIST') return false;
    throw error;
  }
}

/** What a holder file says; any field may be missing or of another type (an older version wrote it). */
export interface FileHolder {
  pid?: unknown;
  host?: unknown;
  [field: string]: unknown;
}

/** Who a holder file says holds it, or null when it says nothing readable. */
export function holderOf(text: string): FileHolder | null {
  try {
    const holder = JSON.parse(text) as unknown;
    return holder !== null && typeof holder === 'object' ? (holder as FileHolder) : null;
  } catch {
    return null;
  }
}

/** The holder is a process of this host other than this one, and signal 0 says it is gone. */
export function holderIsDeadHere(holder: FileHolder): boolean {
  if (holder.host !== hostname() || typeof holder.pid !== 'number' || holder.pid === process.pid)
    return false;
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    return errnoOf(error) === 'ESRCH';
  }
}
