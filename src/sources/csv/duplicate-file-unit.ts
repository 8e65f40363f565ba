import type { SeenDropFile } from '../../domain/drop-files.js';
import type { Stream } from '../../domain/records.js';
import type { SourceBatch, SourceUnit } from '../source.js';
import { archiveDuplicate, type ClaimedFile, type DropContext } from './file-settlement.js';

/**
 * A file whose content was synced before (same checksum): no record is read again; its rows count
 * as unchanged in the pass summary (`alreadySynced`), and it is archived as a duplicate.
 */
export class DuplicateFileUnit implements SourceUnit {
  readonly name: string;
  readonly stream: Stream;
  readonly alreadySynced: number;
  readonly duplicateOf?: { name: string; syncedAt: Date };
  #settled = false;

  constructor(
    private readonly ctx: DropContext,
    private readonly file: ClaimedFile,
    private readonly previous: SeenDropFile,
  ) {
    this.name = file.name;
    this.stream = file.stream;
    this.alreadySynced = Math.max(0, previous.rows - previous.failedRows);
    if (previous.name && previous.finishedAt)
      this.duplicateOf = { name: previous.name, syncedAt: previous.finishedAt };
  }

  get settled(): boolean {
    return this.#settled;
  }

  async *batches(): AsyncGenerator<SourceBatch> {}

  async complete(): Promise<void> {
    if (this.#settled) return;
    if (!this.ctx.dryRun) await archiveDuplicate(this.ctx, this.file, this.previous);
    // Only now: a file that could not be moved (a full disk) is still released by the source.
    this.#settled = true;
  }

  abandon(): Promise<void> {
    return this.complete();
  }

  async release(): Promise<void> {
    if (this.#settled) return;
    this.#settled = true;
    if (!this.ctx.dryRun) await this.ctx.folder.release(this.file.name);
  }
}
