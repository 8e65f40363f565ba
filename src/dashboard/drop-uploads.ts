import type { SourceConfig } from '../config/schema.js';

/**
 * The port of the dashboard's uploads: a file given in the browser waits beside a CSV source's
 * drop folder, is previewed with a dry run, then goes into the drop folder or is deleted. The
 * composition root implements it (`src/app/drop-uploads.ts`, over `sources/csv/upload-staging.ts`
 * and the sync's dry run); the dashboard knows neither.
 */
export interface DropUploads {
  /** The largest file taken, in bytes (`dashboard.uploadMaxMb`). */
  readonly maxBytes: number;
  /** What a file's name must look like for the source to take it (`accounts*.csv, ...`). */
  namesTaken(source: SourceConfig): string;
  /**
   * Writes the file to the source's staging folder under its sanitized name.
   *
   * @throws an error with `code`: `CSV_UPLOAD_NAME_REFUSED`, `CSV_UPLOAD_TOO_LARGE`,
   * `CSV_DROP_DIR_MISSING`, `CSV_DROP_DIR_UNSAFE`
   */
  stage(source: SourceConfig, sentName: string, content: AsyncIterable<Uint8Array>): Promise<UploadView>;
  /** The source's uploads waiting for a decision, oldest first. */
  list(source: SourceConfig): Promise<UploadView[]>;
  /** The upload `id` as the next pass would read it, or null when none waits under that id. */
  preview(source: SourceConfig, id: string): Promise<UploadPreview | null>;
  /**
   * Moves the upload into the drop folder (its name, or the next free one): the name it got.
   *
   * @throws an error with `code`: `CSV_UPLOAD_UNKNOWN`, `CSV_UPLOAD_NAME_TAKEN`
   */
  take(source: SourceConfig, id: string): Promise<{ name: string }>;
  /** Deletes the upload: its name, or null when none waited under `id`. */
  discard(source: SourceConfig, id: string): Promise<{ name: string } | null>;
}

/** One upload waiting in the staging folder. */
export interface UploadView {
  id: string;
  name: string;
  kind: 'accounts' | 'invoices' | 'creditNotes';
  size: number;
  stagedAt: Date;
}

/** Per kind, what a pass would do with the file's records now. */
export interface UploadCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

/** How an upload reads under the source's configuration, and what a pass would do with it. */
export interface UploadPreview {
  upload: UploadView;
  /** Its first rows as records (`invoice RE-1 (number ...): total 1428.00, ... due 2026-02-11`) or refusals. */
  rows: Array<{ line: number | null; text: string }>;
  /** The rows that would fail and why (the first `failuresShown`; `failedTotal` counts them all). */
  failures: Array<{ line: number | null; column: string | null; key: string; reason: string }>;
  failedTotal: number;
  counts: Record<'accounts' | 'invoices' | 'creditNotes', UploadCounts>;
  /** The writes a pass would send, in order (the first `planShown`; `planTotal` counts them all). */
  plan: Array<{ operation: string; kind: string; key: string; detail: string | null }>;
  planTotal: number;
  /** Why the file as a whole would be set aside in `rejected/` (its encoding, its header); null: read. */
  refused: string | null;
  /** The same content was synced before: the pass would skip it (its rows count as unchanged). */
  duplicateOf: { name: string; syncedAt: Date } | null;
  /** What the pass would say about the file as a whole (unknown columns, snapshot deletions). */
  warnings: string[];
  /** The preview could not be made (the API unreachable...): why; the rest is then empty. */
  error: string | null;
}

/** Planned writes and failed rows listed on the preview at most (the counts have them all). */
export const PREVIEW_LISTED = 200;
