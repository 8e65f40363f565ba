import type { Dirent } from 'node:fs';
import { type FileHandle, lstat, readdir, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import type { Stream } from '../../domain/records.js';
import { ClaimLeases } from './claim-lease.js';
import { internalKey, numberedName, storedName } from './drop-names.js';
import { CsvSourceError } from './errors.js';
import { createExclusive, entryKind, lstatOrNull, moveNoClobber } from './exclusive-entries.js';
import { type FileStamp, streamOfFileName } from './file-selection.js';
import { checkWorkingFolders, workingFolder } from './working-folder.js';

/**
 * The drop folder on disk:
 *
 *   <dropDir>/<name>                         dropped files, waiting
 *   <dropDir>/.processing/<name>             claimed by one process (rename: atomic on one file system)
 *   <dropDir>/.processing/<key>.lease        its lease: who holds it, touched while it is processed
 *   <dropDir>/archive/<YYYY-MM-DD>/<name>    done, with `<name>.errors.csv` when rows failed
 *   <dropDir>/rejected/<name>                unreadable, with `<name>.reason.txt`
 *
 * Every folder lives under the drop folder, so every move is a rename on the same file system.
 * `<key>` is the name, or a hash of a name too long to take a suffix (see `drop-names.ts`), as is
 * the name in `archive/` and `rejected/`. The working folders must be real folders, and nothing the
 * source finds in its way is written through or replaced (`working-folder.ts`, `exclusive-entries.ts`).
 */
export const PROCESSING_DIR = '.processing';
export const ARCHIVE_DIR = 'archive';
export const REJECTED_DIR = 'rejected';
const WORKING_DIRS = [PROCESSING_DIR, ARCHIVE_DIR, REJECTED_DIR] as const;

/** The spools of a claimed file's report (see CsvFileUnit): `.processing/<key><suffix>`. */
export const SPOOL_SUFFIXES = ['.problems.ndjson', '.failed.ndjson'] as const;
/** The names the source gives its own files in `.processing/`. */
const INTERNAL_SUFFIXES = [...SPOOL_SUFFIXES, '.lease', '.tmp'] as const;

export interface RootFileStamp extends FileStamp {
  ino: number;
}

/** What a claim attempt found: only `claimed` means the file is now ours. */
export type ClaimResult = 'claimed' | 'gone' | 'busy' | 'changed';

/**
 * A file a dead process left in `.processing/`: put back in the root, blocked by a newer one, or not
 * a regular file (`unsafe`: a link someone put there, left as it is).
 */
export interface StaleClaim {
  name: string;
  outcome: 'recovered' | 'blocked' | 'unsafe';
}

/** A claimed file moved to `archive/<day>/` or `rejected/`. */
export interface PlacedFile {
  path: string;
  /** `<path><suffix>`, created empty and open for writing, when a companion was asked for. */
  companion: { path: string; handle: FileHandle } | null;
  /**
   * The entries in the way that the source never makes (a symbolic link, a folder), relative to
   * the drop folder with what they are: left as they were, the file took the next free name.
   */
  planted: string[];
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

export class DropFolder {
  readonly #leases: ClaimLeases;

  readonly #kindOf: (name: string) => Stream | null;

  /** @param kindOf the kind of a file by its name (the source's `files:` patterns). */
  constructor(
    readonly root: string,
    clock: Clock,
    kindOf: (name: string) => Stream | null = streamOfFileName,
  ) {
    this.#leases = new ClaimLeases(join(root, PROCESSING_DIR), clock);
    this.#kindOf = kindOf;
  }

  processingPath(name: string): string {
    return join(this.root, PROCESSING_DIR, name);
  }

  /** `.processing/<key><suffix>`: a file of the claim of `name` (its spools). */
  internalPath(name: string, suffix: string): string {
    return join(this.root, PROCESSING_DIR, `${internalKey(name)}${suffix}`);
  }

  /**
   * Checks the working folders that exist: each must be a real folder.
   *
   * @throws CsvSourceError `CSV_DROP_DIR_UNSAFE` naming the folder and the fix
   */
  checkWorkingFolders(): Promise<void> {
    return checkWorkingFolders(this.root, WORKING_DIRS);
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
    await workingFolder(this.root, PROCESSING_DIR);
    const key = internalKey(name);
    if (!(await this.#leases.acquire(key))) return 'busy';
    try {
      if ((await lstatOrNull(target)) !== null) {
        await this.#leases.release(key);
        return 'busy';
      }
      try {
        await rename(join(this.root, name), target);
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw error;
        await this.#leases.release(key);
        return 'gone';
      }
      const st = await lstat(target);
      if (st.ino !== expected.ino || st.size !== expected.size || st.mtimeMs !== expected.mtimeMs) {
        await this.release(name);
        return 'changed';
      }
      return 'claimed';
    } catch (error) {
      await this.#leases.release(key);
      throw error;
    }
  }

  /** Puts a claimed file back in the root (unless a new file of that name arrived meanwhile). */
  async release(name: string): Promise<void> {
    await workingFolder(this.root, PROCESSING_DIR);
    await moveNoClobber(this.processingPath(name), join(this.root, name));
    await this.#leases.release(internalKey(name));
  }

  /**
   * The entries at the spool names of a claimed file, before its spools are created: a regular
   * file (a dead pass's spool) is removed; anything else (a symbolic link, a folder) was put there
   * by someone else and is left as it is: returned, relative to the drop folder with what it is.
   */
  async clearSpools(name: string): Promise<string[]> {
    const planted: string[] = [];
    for (const suffix of SPOOL_SUFFIXES) {
      const path = this.internalPath(name, suffix);
      const found = await lstatOrNull(path);
      if (found === null) continue;
      if (found.isFile()) await rm(path, { force: true });
      else planted.push(`${relative(this.root, path)} (${entryKind(found)})`);
    }
    return planted;
  }

  /**
   * Takes back the files that processes which died left in `.processing/` (their lease went stale):
   * each goes back to the root, to be taken again, unless a newer file of that name waits there.
   */
  async recoverStaleClaims(): Promise<StaleClaim[]> {
    await this.checkWorkingFolders();
    let entries: Dirent[];
    try {
      entries = await readdir(join(this.root, PROCESSING_DIR), { withFileTypes: true });
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return [];
      throw error;
    }
    // A pattern like `Kunden*` also matches the source's own files beside a claim: not claims.
    const claimed = entries.filter(
      (entry) => this.#kindOf(entry.name) !== null && !INTERNAL_SUFFIXES.some((s) => entry.name.endsWith(s)),
    );
    const keys = new Set(claimed.map((entry) => internalKey(entry.name)));
    for (const { name: lease } of entries.filter((entry) => entry.name.endsWith('.lease'))) {
      // A lease whose file is gone: its holder died between moving the file out and letting go.
      const key = lease.slice(0, -'.lease'.length);
      if (!keys.has(key) && !this.#leases.holds(key) && (await this.#leases.isStale(key))) {
        await this.#leases.release(key);
      }
    }
    const claims: StaleClaim[] = [];
    for (const entry of claimed) {
      const { name } = entry;
      const key = internalKey(name);
      if (this.#leases.holds(key) || !(await this.#leases.isStale(key))) continue;
      // The source only ever renames regular files in: a link or a folder here is someone else's.
      if (!entry.isFile()) {
        claims.push({ name, outcome: 'unsafe' });
        continue;
      }
      try {
        await moveNoClobber(this.processingPath(name), join(this.root, name));
      } catch (error) {
        const code = errnoOf(error);
        if (code === 'ENOENT') continue; // another process recovered it first
        if (code !== 'EEXIST') throw error;
        claims.push({ name, outcome: 'blocked' });
        continue;
      }
      // The report spools of the pass that died (see CsvFileUnit); rm removes a link, not its target.
      for (const suffix of SPOOL_SUFFIXES) await rm(this.internalPath(name, suffix), { force: true });
      await this.#leases.release(key);
      claims.push({ name, outcome: 'recovered' });
    }
    return claims;
  }

  /**
   * Moves a claimed file to `archive/<day>/`, under the next free name (`invoices~2.csv`), with the
   * companion `<path><companion>` created empty beside it when asked (its report).
   */
  async archive(name: string, day: string, companion?: string): Promise<PlacedFile> {
    await workingFolder(this.root, PROCESSING_DIR);
    const dir = await workingFolder(this.root, ARCHIVE_DIR, day);
    const placed = await this.#place(name, dir, companion);
    await this.#leases.release(internalKey(name));
    return placed;
  }

  /** Moves a claimed file to `rejected/`, under the next free name, with `<path>.reason.txt` created empty. */
  async reject(name: string): Promise<PlacedFile> {
    await workingFolder(this.root, PROCESSING_DIR);
    const dir = await workingFolder(this.root, REJECTED_DIR);
    const placed = await this.#place(name, dir, '.reason.txt');
    await this.#leases.release(internalKey(name));
    return placed;
  }

  /**
   * Moves `.processing/<name>` into `dir` under the first numbered name free for the file and its
   * companion alike. The companion is created first, exclusively: a name taken by anything, a
   * planted link included, is passed over, never written through.
   */
  async #place(name: string, dir: string, companion: string | undefined): Promise<PlacedFile> {
    const from = this.processingPath(name);
    const base = storedName(name);
    const planted: string[] = [];
    for (let n = 1; n < 10_000; n++) {
      const target = join(dir, numberedName(base, n));
      let made: PlacedFile['companion'] = null;
      if (companion !== undefined) {
        const path = `${target}${companion}`;
        try {
          made = { path, handle: await createExclusive(path) };
        } catch (error) {
          if (errnoOf(error) !== 'EEXIST') throw error;
          await this.#notePlanted(path, planted);
          continue;
        }
      }
      try {
        await moveNoClobber(from, target);
        return { path: target, companion: made, planted };
      } catch (error) {
        if (made !== null) {
          await made.handle.close();
          await rm(made.path, { force: true });
        }
        if (errnoOf(error) !== 'EEXIST') throw error;
        await this.#notePlanted(target, planted);
      }
    }
    throw new Error(`no free name for ${name} in ${dir}`);
  }

  /** A taken name is the same name settled before (a regular file), or an entry someone planted. */
  async #notePlanted(path: string, planted: string[]): Promise<void> {
    const found = await lstatOrNull(path);
    if (found !== null && !found.isFile()) planted.push(`${relative(this.root, path)} (${entryKind(found)})`);
  }
}
