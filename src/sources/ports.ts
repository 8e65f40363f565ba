import type { DropFileEntry, SeenDropFile } from '../domain/drop-files.js';
import type { CursorValue } from '../domain/records.js';

/**
 * What sources need from the state kept between passes, declared here by the sources that use it
 * (ports owned by their consumer). The state DB's repositories implement them (`state/cursors.ts`,
 * `state/drop-files.ts`) and the composition root (`src/app/`) hands them in; the in-memory ones
 * below serve tests, benchmarks and dry runs.
 */

/** What a source needs to resume where it stopped: its cursors, one per stream. */
export interface CursorStore {
  get(sourceId: string, stream: string): Promise<CursorValue | null>;
  set(sourceId: string, stream: string, cursor: CursorValue): Promise<void>;
}

/**
 * The drop-file ledger: what became of every file a CSV source took, keyed by content (sha256).
 * It lets a pass recognise the same content dropped twice.
 */
export interface DropFileLedger {
  /**
   * The latest entry of this source with this content, or null. The source treats `done` and
   * `duplicate` as "already synced"; after `failed` or `rejected` the same content is read again
   * (re-dropping a file once its accounts exist is how a user retries it).
   */
  seen(sourceId: string, checksum: string): Promise<SeenDropFile | null>;
  record(entry: DropFileEntry): Promise<void>;
}

/** Cursors in memory, for tests and benchmarks. */
export class InMemoryCursorStore implements CursorStore {
  readonly #cursors = new Map<string, CursorValue>();

  async get(sourceId: string, stream: string): Promise<CursorValue | null> {
    return this.#cursors.get(`${sourceId}\u0000${stream}`) ?? null;
  }

  async set(sourceId: string, stream: string, cursor: CursorValue): Promise<void> {
    this.#cursors.set(`${sourceId}\u0000${stream}`, structuredClone(cursor));
  }

  async reset(sourceId: string, stream?: string): Promise<void> {
    for (const key of this.#cursors.keys()) {
      const [source, name] = key.split('\u0000');
      if (source === sourceId && (stream === undefined || name === stream)) this.#cursors.delete(key);
    }
  }
}

/** A ledger in memory: for tests, dry runs, and a process that needs no memory across restarts. */
export class InMemoryDropFileLedger implements DropFileLedger {
  readonly entries: DropFileEntry[] = [];

  async seen(sourceId: string, checksum: string): Promise<SeenDropFile | null> {
    const same = this.entries.filter((e) => e.sourceId === sourceId && e.checksum === checksum);
    // The latest, the original rather than a duplicate of it (as the state DB's ledger does).
    const entry = same.findLast((e) => e.status !== 'duplicate') ?? same.at(-1);
    if (!entry) return null;
    return {
      status: entry.status,
      name: entry.name,
      finishedAt: entry.finishedAt,
      archivedPath: entry.archivedPath ?? null,
      rows: entry.rows,
      failedRows: entry.failedRows,
    };
  }

  async record(entry: DropFileEntry): Promise<void> {
    this.entries.push({ ...entry });
  }
}
