import { dropFolderSettingsOf, type SourceConfig } from '../config/schema.js';
import type { SourceProfile } from '../dashboard/source-profile.js';
import { fileKinds } from '../sources/csv/file-selection.js';
import { describeSource } from '../sources/describe-source.js';

/**
 * What `status` shows of a source's type; the CLI asks here, as it never imports `sources/`.
 */
export interface StatusProfile {
  /** The streams it is configured with: listed before they have a cursor. */
  configuredStreams: readonly string[];
  /** Its `cursors:` line when it has none. */
  noCursors: string;
}

/** A source's `StatusProfile` by its id. */
export type StatusProfiles = (sourceId: string) => StatusProfile;

/** `status`'s view of each source's type, from the source's own description (an unknown id: none). */
export function statusProfiles(sources: readonly SourceConfig[]): StatusProfiles {
  const profiles = new Map(
    sources.map((source): [string, StatusProfile] => {
      const described = describeSource(source);
      return [
        source.id,
        { configuredStreams: described.configuredStreams, noCursors: described.noCursors.status },
      ];
    }),
  );
  return (sourceId) => profiles.get(sourceId) ?? { configuredStreams: [], noCursors: 'none yet' };
}

/** The dashboard's view of a source's type (`DashboardDeps.describeSource`), from its own description. */
export function dashboardProfileOf(source: SourceConfig): SourceProfile {
  const described = describeSource(source);
  const dropFolder = dropFolderSettingsOf(source);
  return {
    noCursors: described.noCursors.page,
    dropDir: described.dropDir,
    settings: described.settings,
    ...(dropFolder
      ? { dropFiles: { stableSeconds: dropFolder.stableSeconds, kindOf: fileKinds(dropFolder.files) } }
      : {}),
  };
}
