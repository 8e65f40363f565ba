import type { SourceConfig } from '../../config/schema.js';
import type { SourceDescription } from '../source-description.js';
import { moduleLoadCheck } from './module-check.js';

/** A module source: the user's module keeps its own cursors, per stream it yields. */
export function moduleDescription(config: Extract<SourceConfig, { type: 'module' }>): SourceDescription {
  return {
    noCursors: { status: 'none yet', page: 'none yet' },
    configuredStreams: [],
    dropDir: null,
    columnMapping: {},
    settings: [{ label: 'Module', value: [{ code: config.module }] }],
    check: (context) => moduleLoadCheck(config, context),
    // The module's units are its own: nothing is set aside for a user to drop again.
    unreadUnit: () => null,
  };
}
