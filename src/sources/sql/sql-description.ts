import type { SourceConfig } from '../../config/schema.js';
import type { SettingPiece, SourceDescription } from '../source-description.js';
import { sqlQueryCheck } from './query-check.js';
import { configuredStreams } from './sql-settings.js';

type SqlSourceConfig = Extract<SourceConfig, { type: 'sql' }>;

/** A SQL source: a keyset cursor per configured stream, its queries shown on the dashboard. */
export function sqlDescription(config: SqlSourceConfig): SourceDescription {
  const streams = configuredStreams(config);
  return {
    noCursors: { status: 'none yet', page: 'none yet' },
    configuredStreams: streams.map(([stream]) => stream),
    dropDir: null,
    columnMapping: {},
    settings: [
      { label: 'Database', value: [{ text: 'from ' }, { code: `$${config.urlEnv}` }] },
      {
        label: 'Streams',
        value: [
          ...streams.map(
            ([stream, settings]): SettingPiece => ({
              fold: {
                summary: [{ code: stream }, { text: ' by ' }, { code: settings.cursorColumns.join(', ') }],
                body: settings.query,
              },
            }),
          ),
          {
            note: `${config.fullRefresh ? 'full refresh every pass' : `${config.lookbackSeconds} s look-back`} · pages of ${config.batchSize} rows`,
          },
        ],
      },
    ],
    check: (context) => sqlQueryCheck(config, context),
    // A stream that could not be read keeps its cursor: the next pass reads it again.
    unreadUnit: () => null,
  };
}
