import { link, lstat, mkdir, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { extname, join } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import { ClaimLeases } from './claim-lease.js';
import { CsvSourceError } from './errors.js';
import { type FileStamp, streamOfFileName } from './file-selection.js';

/**
 * The drop folder on disk:
 *
 *   <dropDir>/<name>                         dropped files, waiting
 *   <dropDir>/.processing/<name>             claimed by one process (rename: atomic on one file system)
 *   <dropDir>/.processing/<name>.lease       its lease: who holds it, touched while it is processed
 *   <dropDir>/archive/<YYYY-MM-DD>/<name>    done, with `<name>.errors.csv` when rows failed
 *   <dropDir>/rejected/<name>                unreadable, with `<name>.reason.txt`
 *
 * Every folder lives under the drop folder, so every move is a rename on the same file system.
 */
export const PROCESSING_DIR = '.processing';
export const ARCHIVE_DIR = 'archive';
export const REJECTED_DIR = 'rejected';

export interface RootFileStamp extends FileStamp {
  ino: number;
}

/** What a claim attempt found: only `claimed` means the file is now ours. */
export type ClaimResult = 'claimed' | 'gone' | 'busy' | 'changed';

/** A file a dead process left in `.processing/`: put back in the root, or blocked by a newer one. */
export interface StaleClaim {
  name: string;
  outcome: 'recovered' | 'blocked';
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

export class DropFolder {
  readonly #leases: ClaimLeases;

  constructor(
    readonly root: string,
    clock: Clock,
  ) {
    this.#leases = new ClaimLeases(join(root, PROCESSING_DIR), clock);
  }

  processingPath(name: string): string {
    return join(this.root, PROCESSING_DIR, name);
  }

  /** Names of the regular files in the root (symlinks and folders are never taken). */
  async listRootFiles(): Promise<string[]> {
    try {
      const entries = await readdir(this.root, { withFileTypes: true });
      return entries.filter((entry) => entry.isFile()).map((entry) => entry.name);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') {
        throw new CsvSourceError(
          'CSV_DROP_DIR_MISSING',
          `the drop folder ${this.root} does not exist: create it (mkdir -p), or fix the source's dropDir`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
  }

  /** Size and mtime of a root file; null when it is gone or no longer a regular file. */
  async stampOf(name: string): Promise<RootFileStamp | null> {
    try {
      const st = await lstat(join(this.root, name));
      return st.isFile() ? { size: st.size, mtimeMs: st.mtimeMs, ino: st.ino } : null;
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return null;
      throw error;
    }
  }

  /**
   * Claims a root file: takes its lease (an exclusive create, so one claimer per name), then renames
   * it into `.processing/`. Of two processes racing for a file, the loser finds the lease taken or
   * its rename fails with ENOENT. A file of the same name still in `.processing/` (an earlier drop
   * being processed) is left alone (`busy`) rather than overwritten. A file that changed under the
   * rename (still being written) is put back (`changed`).
   */
  async claim(name: string, expected: RootFileStamp): Promise<ClaimResult> {
    const target = this.processingPath(name);
    await mkdir(join(this.root, PROCESSING_DIR), { recursive: true });
    if (!(await this.#leases.acquire(name))) return 'busy';
    try {
      if (await exists(target)) {
        await this.#leases.release(name);
        return 'busy';
      }
      try {
        await rename(join(this.root, name), target);
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw error;
        await this.#leases.release(name);
        return 'gone';
      }
      const st = await stat(target);
      if (st.ino !== expected.ino || st.size !== expected.size || st.mtimeMs !== expected.mtimeMs) {
        await this.release(name);
        return 'changed';
      }
      return 'claimed';
    } catch (error) {
      await this.#leases.release(name);
      throw error;
    }
  }

  /** Puts a claimed file back in the root (unless a new file of that name arrived meanwhile). */
  async release(name: string): Promise<void> {
    await moveNoClobber(this.processingPath(name), this.root, name, { numbered: false });
    await this.#leases.release(name);
  }

  /**
   * Takes back the files that processes which died left in `.processing/` (their lease went stale):
   * each goes back to the root, to be taken again, unless a newer file of that name waits there.
   */
  async recoverStaleClaims(): Promise<StaleClaim[]> {
    let entries: string[];
    try {
      entries = await readdir(join(this.root, PROCESSING_DIR));
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return [];
      throw error;
    }
    const present = new Set(entries);
    const claims: StaleClaim[] = [];
    for (const lease of entries.filter((entry) => entry.endsWith('.lease'))) {
      // A lease whose file is gone: its holder died between moving the file out and letting go.
      const name = lease.slice(0, -'.lease'.length);
      if (!present.has(name) && !this.#leases.holds(name) && (await this.#leases.isStale(name))) {
        await this.#leases.release(name);
      }
    }
    for (const name of entries) {
      if (streamOfFileName(name) === null || this.#leases.holds(name) || !(await this.#leases.isStale(name)))
        continue;
      try {
        await moveNoClobber(this.processingPath(name), this.root, name, { numbered: false });
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT') continue; // another process recovered it first
        if (code !== 'EEXIST') throw error;
        claims.push({ name, outcome: 'blocked' });
        continue;
      }
      // The report spools of the pass that died (see CsvFileUnit).
      for (const spool of ['problems', 'failed'])
        await rm(`${this.processingPath(name)}.${spool}.ndjson`, { force: true });
      await this.#leases.release(name);
      claims.push({ name, outcome: 'recovered' });
    }
    return claims;
  }

  /** Moves a claimed file to `archive/<day>/`; returns its new path (numbered on a name collision). */
  async archive(name: string, day: string): Promise<string> {
    const dir = join(this.root, ARCHIVE_DIR, day);
    await mkdir(dir, { recursive: true });
    const path = await moveNoClobber(this.processingPath(name), dir, name);
    await this.#leases.release(name);
    return path;
  }

  /** Moves a claimed file to `rejected/`; returns its new path (numbered on a name collision). */
  async reject(name: string): Promise<string> {
    const dir = join(this.root, REJECTED_DIR);
    await mkdir(dir, { recursive: true });
    const path = await moveNoClobber(this.processingPath(name), dir, name);
    await this.#leases.release(name);
    return path;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** `invoices.csv` -> `invoices~2.csv`. */
export function numberedName(name: string, n: number): string {
  if (n === 1) return name;
  const ext = extname(name);
  return `${name.slice(0, name.length - ext.length)}~${n}${ext}`;
}

/**
 * Moves `from` into `dir` under `name`, never replacing an existing file: `link` fails with EEXIST
 * where `rename` would silently overwrite. On a file system without hard links it falls back to
 * check-then-rename (a race only between two processes archiving the same name the same second).
 */
async function moveNoClobber(
  from: string,
  dir: string,
  name: string,
  options: { numbered: boolean } = { numbered: true },
): Promise<string> {
  for (let n = 1; n < 10_000; n++) {
    const target = join(dir, numberedName(name, n));
    try {
      await link(from, target);
      await unlink(from);
      return target;
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'EEXIST') {
        if (!options.numbered) throw error;
        continue;
      }
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') throw error;
      if (await exists(target)) {
        if (!options.numbered) throw Object.assign(new Error(`${target} exists`), { code: 'EEXIST' });
        continue;
      }
      await rename(from, target);
      return target;
    }
  }
  throw new Error(`no free name for ${name} in ${dir}`);
}
