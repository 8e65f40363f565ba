import type { Dirent } from 'node:fs';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Clock } from '../../domain/clock.js';
import type { Stream } from '../../domain/records.js';
import { ClaimLeases } from './claim-lease.js';
import { removeStaleCopies } from './cross-device-copy.js';
import { internalKey, storedName } from './drop-names.js';
import { CsvSourceError } from './errors.js';
import { entryKind, lstatOrNull, moveNoClobber } from './exclusive-entries.js';
import { type ClaimStamp, FileChangedError } from './file-change.js';
import { type Companion, type PlacedFile, type PlaceProps, placeFile } from './file-placement.js';
import { streamOfFileName } from './file-selection.js';
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
 * Every folder lives under the drop folder. A move is a rename on one file system; `archive/` or
 * `rejected/` mounted from elsewhere (a network share) is copied to, whole and flushed, before the
 * file is removed (`cross-device-copy.ts`). `<key>` is the name, or a hash of a name too long to
 * take a suffix (see `drop-names.ts`), as is the name in `archive/` and `rejected/`. The working
 * folders must be real folders, and nothing the source finds in its way is written through or
 * replaced (`working-folder.ts`, `exclusive-entries.ts`). A file leaves `.processing/` for
 * `archive/` or `rejected/` only as it was claimed: one its writer still writes to goes back to the
 * root (`file-change.ts`).
 */
export const PROCESSING_DIR = '.processing';
export const ARCHIVE_DIR = 'archive';
export const REJECTED_DIR = 'rejected';
const WORKING_DIRS = [PROCESSING_DIR, ARCHIVE_DIR, REJECTED_DIR] as const;

/** The spools of a claimed file's report (see CsvFileUnit): `.processing/<key><suffix>`. */
export const SPOOL_SUFFIXES = ['.problems.ndjson', '.failed.ndjson'] as const;
/** The report of a claimed file while it is written, before it goes to `archive/` with the file. */
export const REPORT_DRAFT_SUFFIX = '.errors.csv.tmp';
/** The files a claim makes beside its file in `.processing/`, removed with the claim. */
const CLAIM_FILE_SUFFIXES = [...SPOOL_SUFFIXES, REPORT_DRAFT_SUFFIX] as const;
/** The names the source gives its own files in `.processing/`. */
const INTERNAL_SUFFIXES = [...CLAIM_FILE_SUFFIXES, '.lease', '.tmp'] as const;

/** A root file's inode, size and mtime: a claimed file must keep them (see `file-change.ts`). */
export type RootFileStamp = ClaimStamp;

export type { PlacedFile } from './file-placement.js';

/** Where a settled file went, or why it went back to the drop folder instead (see `archive`). */
export type Placement = PlacedFile | ChangedClaim;

/** A claimed file found changed as it was to be settled (still being written): put back in the root. */
export interface ChangedClaim {
  changed: string;
}

/** What a claim attempt found: only `claimed` means the file is now ours. */
export type ClaimResult = 'claimed' | 'gone' | 'busy' | 'changed';

/**
 * A file a dead process left in `.processing/`: put back in the root, blocked by a newer one, or not
 * a regular file (`unsafe`: a link someone put there, left as it is). `leftover`: a file a claim
 * made (a spool, a report cut short by a full disk, a copy cut short in `archive/`) whose claim is
 * gone: removed; its name is relative to the drop folder.
 */
export interface StaleClaim {
  name: string;
  outcome: 'recovered' | 'blocked' | 'unsafe' | 'leftover';
}

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

export class DropFolder {
  readonly #leases: ClaimLeases;

  readonly #kindOf: (name: string) => Stream | null;

  readonly #clock: Clock;

  /** @param kindOf the kind of a file by its name (the source's `files:` patterns). */
  constructor(
    readonly root: string,
    clock: Clock,
    kindOf: (name: string) => Stream | null = streamOfFileName,
  ) {
    this.#leases = new ClaimLeases(join(root, PROCESSING_DIR), clock);
    this.#kindOf = kindOf;
    this.#clock = clock;
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
   * The entries at the spool and report names of a claimed file, before they are created: a regular
   * file (a dead pass's spool) is removed; anything else (a symbolic link, a folder) was put there
   * by someone else and is left as it is: returned, relative to the drop folder with what it is.
   */
  async clearSpools(name: string): Promise<string[]> {
    const planted: string[] = [];
    for (const suffix of CLAIM_FILE_SUFFIXES) {
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
      for (const suffix of CLAIM_FILE_SUFFIXES) await rm(this.internalPath(name, suffix), { force: true });
      await this.#leases.release(key);
      claims.push({ name, outcome: 'recovered' });
    }
    for (const name of await this.#removeLeftovers(entries, keys)) claims.push({ name, outcome: 'leftover' });
    return claims;
  }

  /**
   * The files of claims that are gone (their file settled or put back by a pass that stopped before
   * removing them: a spool, a report cut short by a full disk), and the copies into `archive/` or
   * `rejected/` a killed process left: nobody's, removed. Returns them, relative to the drop folder.
   */
  async #removeLeftovers(entries: Dirent[], claimedKeys: ReadonlySet<string>): Promise<string[]> {
    const removed: string[] = [];
    for (const entry of entries) {
      const suffix = CLAIM_FILE_SUFFIXES.find((s) => entry.name.endsWith(s));
      if (suffix === undefined || !entry.isFile()) continue;
      const key = entry.name.slice(0, -suffix.length);
      if (claimedKeys.has(key) || this.#leases.holds(key) || !(await this.#leases.isStale(key))) continue;
      await rm(join(this.root, PROCESSING_DIR, entry.name), { force: true });
      removed.push(join(PROCESSING_DIR, entry.name));
    }
    const now = this.#clock.now().getTime();
    for (const dir of [ARCHIVE_DIR, REJECTED_DIR])
      for (const name of await removeStaleCopies(join(this.root, dir), now)) removed.push(join(dir, name));
    return removed;
  }

  /**
   * Moves a claimed file to `archive/<day>/`, under the next free name (`invoices~2.csv`), with the
   * companion (its report) put whole beside it first, as `<path><suffix>`. A file that changed since
   * it was claimed (`claimed`: still being written) is not archived: it goes back to the root, to be
   * read again whole, and the change is returned.
   *
   * @throws the file system's error when the report or the file cannot be put there (a full disk):
   * the file stays claimed (the caller puts it back), no part of the report is left in `archive/`
   */
  archive(name: string, day: string, claimed: ClaimStamp, companion?: Companion): Promise<Placement> {
    return this.#settle(name, [ARCHIVE_DIR, day], claimed, companion);
  }

  /**
   * Moves a claimed file to `rejected/`, under the next free name, with `<path>.reason.txt` holding
   * `reason` put beside it first. A file that changed since it was claimed goes back to the root.
   */
  reject(name: string, claimed: ClaimStamp, reason: string): Promise<Placement> {
    return this.#settle(name, [REJECTED_DIR], claimed, { suffix: '.reason.txt', text: reason });
  }

  async #settle(
    name: string,
    folder: [string, ...string[]],
    claimed: ClaimStamp,
    companion: Companion | undefined,
  ): Promise<Placement> {
    await workingFolder(this.root, PROCESSING_DIR);
    const props: PlaceProps = {
      root: this.root,
      from: this.processingPath(name),
      dir: await workingFolder(this.root, ...folder),
      base: storedName(name),
      // The working folder itself: on the same file system as its day folders.
      scratchDir: join(this.root, folder[0]),
      claimed,
      companion,
    };
    let placed: PlacedFile;
    try {
      placed = await placeFile(props);
    } catch (error) {
      if (!(error instanceof FileChangedError)) throw error;
      await this.release(name);
      return { changed: error.change };
    }
    await this.#leases.release(internalKey(name));
    return placed;
  }
}
