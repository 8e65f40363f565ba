import { resolve } from 'node:path';
import type { SourceConfig } from '../../config/schema.js';
import type { SettingPiece, SourceDescription } from '../source-description.js';
import { dropFolderCheck } from './drop-folder-check.js';

/** A drop folder source: it keeps no cursor (each file is tracked by its checksum) and lists its files. */
export function csvDescription(config: Extract<SourceConfig, { type: 'csv' }>): SourceDescription {
  const mapping = Object.entries(config.mapping);
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
    ],
    check: () => dropFolderCheck(resolve(config.dropDir)),
  };
}
