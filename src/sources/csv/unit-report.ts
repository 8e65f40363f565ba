import type { DownstreamFailure } from '../source.js';
import { ProblemSpool, type ReportEntry } from './error-report.js';

/** Line order, a failure without a line last. */
const byLine = (a: ReportEntry, b: ReportEntry) =>
  (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER);

/**
 * The report of one file under way: the rows the source refused and the rows that failed after it
 * (`failed`, batch by batch), each spooled to disk in line order (a file of a million rows keeps no
 * list of them in memory), read back in line order when the file is archived. The spools are
 * drafts: `discard` removes them once the file was archived, rejected or released.
 */
export class UnitReport {
  /** The rows refused by the source, in line order (rows are read in order). */
  readonly #refused: ProblemSpool;
  /** The rows that failed after the source, in line order. */
  readonly #failed: ProblemSpool;
  /** The greatest line spooled in `#failed`; a failure behind it waits in `#behind`. */
  #failedUpTo = 0;
  /** Failures with no line or out of line order: few (the engine hands them over batch by batch). */
  readonly #behind: ReportEntry[] = [];

  /** `refusedPath` and `failedPath`: the spools' files, or null to keep nothing (a dry run). */
  constructor(refusedPath: string | null, failedPath: string | null) {
    this.#refused = new ProblemSpool(refusedPath);
    this.#failed = new ProblemSpool(failedPath);
  }

  /** A row the source refused (rows come in line order). */
  async refuse(entry: ReportEntry): Promise<void> {
    await this.#refused.add(entry);
  }

  /**
   * The failures of a batch after the source. The engine hands them over batch by batch, and a
   * batch's lines all come after the previous one's, so sorting each batch keeps the spool in order.
   */
  async failed(failures: readonly DownstreamFailure[]): Promise<void> {
    const entries = failures.map(
      (failure): ReportEntry => ({
        line: failure.origin.line ?? null,
        column: failure.column ?? '',
        sourceId: failure.sourceKey,
        reason: failure.reason,
        fields: null,
      }),
    );
    entries.sort(byLine);
    for (const entry of entries) {
      if (entry.line === null || entry.line < this.#failedUpTo) {
        this.#behind.push(entry);
        continue;
      }
      this.#failedUpTo = entry.line;
      await this.#failed.add(entry);
    }
  }

  /** Ends the spools' writing (before they are read back). */
  async close(): Promise<void> {
    await this.#refused.close();
    await this.#failed.close();
  }

  /** Whether any row was refused or failed. */
  get anyFailed(): boolean {
    return this.#refused.count + this.#failed.count + this.#behind.length > 0;
  }

  /** The refused rows, in line order. */
  refusedRows(): AsyncGenerator<ReportEntry> {
    return this.#refused.entries();
  }

  /** The rows that failed after the source and the few held back, as one sequence in line order. */
  async *failedRows(): AsyncGenerator<ReportEntry> {
    const behind = this.#behind.sort(byLine);
    let next = 0;
    for await (const entry of this.#failed.entries()) {
      while (next < behind.length && behind[next]!.line !== null && behind[next]!.line! < entry.line!)
        yield behind[next++]!;
      yield entry;
    }
    while (next < behind.length) yield behind[next++]!;
  }

  /** Removes the spools. */
  async discard(): Promise<void> {
    await this.#refused.discard();
    await this.#failed.discard();
  }
}
