import { dropFolderSettingsOf, type SourceConfig } from '../config/schema.js';
import {
  type DropUploads,
  PREVIEW_LISTED,
  type UploadPreview,
  type UploadView,
} from '../dashboard/drop-uploads.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { AppError, messageOf } from '../domain/errors.js';
import { STREAM_ORDER } from '../domain/records.js';
import type { CsvSourceConfig } from '../sources/csv/csv-source.js';
import { filePatternsOf } from '../sources/csv/file-selection.js';
import { type StagedFile, UploadStaging } from '../sources/csv/upload-staging.js';
import type { SourceSummary } from '../sync/run-sync.js';
import { type SyncRuntime, syncServiceOf } from './runtime.js';

export interface DropUploadsProps {
  /** The largest file taken, in bytes. */
  maxBytes: number;
  /**
   * A dry run of a source's configuration (`sync --dry-run`): the preview gives the source's own
   * configuration with the upload's folder as its drop folder, so the run reads that file alone,
   * against the source's state (its record map, its files synced before).
   */
  dryRun: (config: SourceConfig) => Promise<readonly SourceSummary[]>;
  clock?: Clock;
}

/** The dashboard's uploads over a sync runtime (the worker's): a dry run is a `SyncService` pass. */
export function dropUploadsOf(runtime: SyncRuntime, maxBytes: number): DropUploads {
  return createDropUploads({
    maxBytes,
    dryRun: (config) =>
      syncServiceOf(runtime, [config]).syncSource(config.id, { trigger: 'upload preview', dryRun: true }),
  });
}

/**
 * The dashboard's uploads (see `DropUploads`): staged with `UploadStaging`, previewed with a dry
 * run of that one file. Only CSV sources take uploads (the routes refuse the others before asking).
 */
export function createDropUploads(props: DropUploadsProps): DropUploads {
  const clock = props.clock ?? systemClock;
  const stagingOf = (source: SourceConfig) => new UploadStaging({ config: csvOf(source), clock });
  return {
    maxBytes: props.maxBytes,
    namesTaken: (source) => filePatternsOf(csvOf(source).files).join(', '),
    stage: async (source, sentName, content) =>
      viewOf(await stagingOf(source).stage(sentName, content, props.maxBytes)),
    list: async (source) => (await stagingOf(source).list()).map(viewOf),
    async preview(source, id) {
      const staging = stagingOf(source);
      const file = await staging.find(id);
      if (!file) return null;
      try {
        return previewOf(file, await props.dryRun(staging.previewConfig(file)));
      } catch (error) {
        return { ...emptyPreview(file), error: messageOf(error) };
      }
    },
    take: (source, id) => stagingOf(source).take(id),
    async discard(source, id) {
      const staging = stagingOf(source);
      const file = await staging.find(id);
      if (!file || !(await staging.discard(id))) return null;
      return { name: file.name };
    },
  };
}

function csvOf(source: SourceConfig): CsvSourceConfig {
  const settings = dropFolderSettingsOf(source);
  if (!settings)
    throw new AppError(
      'UPLOAD_SOURCE_NOT_CSV',
      `${source.id} is a ${source.type} source: only CSV sources take files`,
    );
  return settings;
}

const viewOf = (file: StagedFile): UploadView => ({
  id: file.id,
  name: file.name,
  kind: file.stream,
  size: file.size,
  stagedAt: file.stagedAt,
});

const zero = () => ({ created: 0, updated: 0, unchanged: 0, failed: 0 });

function emptyPreview(file: StagedFile): UploadPreview {
  return {
    upload: viewOf(file),
    rows: [],
    failures: [],
    failedTotal: 0,
    counts: { accounts: zero(), invoices: zero(), creditNotes: zero() },
    plan: [],
    planTotal: 0,
    refused: null,
    duplicateOf: null,
    warnings: [],
    error: null,
  };
}

/** The dry run's summary as the preview page shows it. */
function previewOf(file: StagedFile, summaries: readonly SourceSummary[]): UploadPreview {
  const preview = emptyPreview(file);
  for (const s of summaries) {
    for (const key of STREAM_ORDER)
      for (const outcome of ['created', 'updated', 'unchanged', 'failed'] as const)
        preview.counts[key][outcome] += s.counts[key][outcome];
    preview.rows.push(...(s.previews ?? []).flatMap((p) => p.rows));
    for (const f of s.failures)
      if (preview.failures.length < PREVIEW_LISTED)
        preview.failures.push({
          line: f.origin.line ?? null,
          column: f.column ?? null,
          key: f.sourceKey,
          reason: f.reason,
        });
    for (const op of s.plan)
      if (preview.plan.length < PREVIEW_LISTED)
        preview.plan.push({
          operation: op.operation,
          kind: op.kind,
          key: op.sourceKey,
          detail: op.detail ?? null,
        });
    preview.planTotal += s.plan.length;
    const refused = s.abandoned.find((a) => a.unit === file.name) ?? s.abandoned[0];
    if (refused) preview.refused = refused.reason;
    const skipped = s.skipped[0];
    if (skipped) preview.duplicateOf = skipped.duplicateOf;
    preview.warnings.push(...s.warnings.map((w) => w.warning));
  }
  preview.failedTotal = STREAM_ORDER.reduce((n, key) => n + preview.counts[key].failed, 0);
  return preview;
}
