import type { SourceConfig } from '../../config/schema.js';
import { KIND_OF_STREAM } from '../../records/columns.js';
import type { SettingPiece, SourceDescription } from '../source-description.js';
import { REJECTED_DIR } from './drop-folder.js';
import { csvSourceCheck } from './drop-folder-check.js';
import { fileKinds } from './file-selection.js';
import { kindFacts } from './kind-settings.js';

/** A drop folder source: it keeps no cursor (each file is tracked by its checksum) and lists its files. */
export function csvDescription(config: Extract<SourceConfig, { type: 'csv' }>): SourceDescription {
  const mapping = Object.entries(config.mapping);
  const kindOf = fileKinds(config.files);
  return {
    noCursors: {
      status: 'none (a drop folder keeps no cursor)',
      page: 'none (files are tracked by checksum)',
    },
    configuredStreams: [],
    dropDir: config.dropDir,
    columnMapping: config.mapping,
    settings: [
      {
        label: 'Drop folder',
        value: [
          { code: config.dropDir },
          { text: ' ' },
          {
            note: `(files stable for ${config.stableSeconds} s; ${config.strictColumns ? 'unknown columns reject a file' : 'unknown columns are a warning'})`,
          },
        ],
      },
      ...(mapping.length > 0
        ? [
            {
              label: 'Mapping',
              value: mapping.flatMap(([from, to]): SettingPiece[] => [
                { code: from },
                { text: ' → ' },
                { code: to },
                { text: ' ' },
              ]),
            },
          ]
        : []),
      // Which files hold which kind, how they are written, where their columns are.
      ...kindFacts(config),
    ],
    check: () => csvSourceCheck(config),
    unreadUnit: (name) => {
      const stream = kindOf(name);
      return stream === null ? null : { kind: KIND_OF_STREAM[stream], file: `${REJECTED_DIR}/${name}` };
    },
  };
}
