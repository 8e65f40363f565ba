import { type CsvSnapshotSettings, csvSnapshotSettings } from '../../config/csv-source-schema.js';
import type { Stream } from '../../domain/records.js';

/** What a file of a kind in snapshot mode is: the whole set (`snapshot`), or not, and why (`notes`). */
export interface FileSnapshot {
  snapshot?: CsvSnapshotSettings;
  notes?: string[];
}

/**
 * The snapshot settings of a file of a kind. When the folder holds a later file of the kind (in name
 * order), that one is the whole set: this one is synced as an incremental file (it deletes nothing),
 * and says so. A kind in incremental mode: nothing.
 */
export function snapshotOf(
  streams: Parameters<typeof csvSnapshotSettings>[0],
  stream: Stream,
  laterFile: string | undefined,
): FileSnapshot {
  const settings = csvSnapshotSettings(streams, stream);
  if (settings === null) return {};
  if (laterFile === undefined) return { snapshot: settings };
  return {
    notes: [
      `snapshot mode: ${laterFile} comes later in this pass and is the whole set of ${stream}; this file deletes nothing`,
    ],
  };
}

/**
 * An error report or a failures download dropped back (its `errors.*` columns) holds the rows to
 * correct, not the whole set: it never deletes, whatever the kind's mode.
 */
export function correctionsOnly(stream: Stream, notes: readonly string[] = []): FileSnapshot {
  return {
    notes: [
      ...notes,
      `snapshot mode: this file has errors.* columns (rows corrected from a report), so it is not the whole set of ${stream}: it deletes nothing`,
    ],
  };
}
