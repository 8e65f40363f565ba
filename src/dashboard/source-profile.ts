import type { SourceConfig } from '../config/schema.js';

/**
 * What the dashboard shows of a source beyond the keys every source has. The composition root
 * builds it from the source's own description (`sources/`, which the dashboard does not import),
 * so no page asks a source's `type` what to show.
 */
export interface SourceProfile {
  /** What its cursors say when it has none ("none yet", or why it keeps none). */
  noCursors: string;
  /** Its drop folder as configured: its files are listed and their reports served; null: it takes no files. */
  dropDir: string | null;
  /** Its own settings, shown on its page under its type. */
  settings: readonly SettingFact[];
  /**
   * How its drop folder's files are taken, for the files waiting there: how long a file must stay
   * unchanged, and the kind its name gives (null: no pattern takes it). Absent: not listed.
   */
  dropFiles?: { stableSeconds: number; kindOf(name: string): string | null };
}

import type { SettingFact } from '../domain/setting-facts.js';

export type { SettingFact, SettingPiece } from '../domain/setting-facts.js';

/** How the dashboard learns a source's profile (`DashboardDeps.describeSource`). */
export type DescribeSource = (source: SourceConfig) => SourceProfile;

/** Without a description: nothing beyond the common keys, no files, no cursor yet. */
const BARE: SourceProfile = { noCursors: 'none yet', dropDir: null, settings: [] };

/** A configured source's profile by its id. */
export type SourceProfiles = (sourceId: string) => SourceProfile;

/** Describes each configured source once (a source not configured, or no `describe`: the bare profile). */
export function sourceProfiles(sources: readonly SourceConfig[], describe?: DescribeSource): SourceProfiles {
  const profiles = new Map(describe ? sources.map((source) => [source.id, describe(source)]) : []);
  return (sourceId) => profiles.get(sourceId) ?? BARE;
}
