/**
 * What became of a file a CSV source took, as its drop-file ledger keeps it (see
 * `sources/ports.ts`): the data both the source and the state DB's adapter speak.
 */

/**
 * - `done`: every row synced or unchanged;
 * - `partial`: the file was read to the end, some rows synced and some failed (see its report);
 * - `failed`: the file was read to the end but every row failed (see its report);
 * - `rejected`: the file could not be read (moved to `rejected/`);
 * - `duplicate`: the same content was already `done`; archived without syncing.
 */
export type DropFileStatus = 'done' | 'partial' | 'failed' | 'rejected' | 'duplicate';

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
  /** The file's name as dropped, and when it was settled (the pass summary names it for a duplicate). */
  name?: string;
  finishedAt?: Date;
  archivedPath: string | null;
  /** Data rows of the file, and those that failed, when it was synced. */
  rows: number;
  failedRows: number;
}
