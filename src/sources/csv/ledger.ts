/**
 * The drop-file ledger: what became of every file a CSV source took, keyed by content (sha256).
 * It lets a pass recognise the same content dropped twice. A port: the state DB adapter writes the
 * `drop_files` table; `InMemoryDropFileLedger` serves tests and dry runs.
 */

/**
 * - `done`: every row synced or unchanged;
 * - `failed`: the file was read to the end but some rows failed (see its report);
 * - `rejected`: the file could not be read (moved to `rejected/`);
 * - `duplicate`: the same content was already `done`; archived without syncing.
 */
export type DropFileStatus = 'done' | 'failed' | 'rejected' | 'duplicate';

export interface DropFileEntry {
  sourceId: string;
  /** The file's name as dropped. */
  name: string;
  /** Hex sha256 of the content. */
  checksum: string;
  size: number;
  status: DropFileStatus;
  /** Data rows read (the header and blank rows not counted). */
  rows: number;
  failedRows: number;
  /** Why the file was rejected. */
  error?: string;
  /** Where the file went: `archive/<day>/<name>` or `rejected/<name>`. */
  archivedPath?: string;
  /** `<name>.errors.csv` (failed rows) or `<name>.reason.txt` (rejected file). */
  reportPath?: string;
  claimedAt: Date;
  finishedAt: Date;
}

export interface SeenDropFile {
  status: DropFileStatus;
  archivedPath: string | null;
}

export interface DropFileLedger {
  /**
   * The latest entry of this source with this content, or null. The source treats `done` and
   * `duplicate` as "already synced"; after `failed` or `rejected` the same content is read again
   * (re-dropping a file once its accounts exist is how a user retries it).
   */
  seen(sourceId: string, checksum: string): Promise<SeenDropFile | null>;
  record(entry: DropFileEntry): Promise<void>;
}

/** A ledger in memory: for tests, dry runs, and a process that needs no memory across restarts. */
export class InMemoryDropFileLedger implements DropFileLedger {
  readonly entries: DropFileEntry[] = [];

  async seen(sourceId: string, checksum: string): Promise<SeenDropFile | null> {
    for (let i = this.entries.length - 1; i >= 0; i--) {
      const entry = this.entries[i]!;
      if (entry.sourceId === sourceId && entry.checksum === checksum) {
        return { status: entry.status, archivedPath: entry.archivedPath ?? null };
      }
    }
    return null;
  }

  async record(entry: DropFileEntry): Promise<void> {
    this.entries.push({ ...entry });
  }
}
