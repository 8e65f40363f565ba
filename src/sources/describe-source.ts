import type { SourceConfig } from '../config/schema.js';
import { csvDescription } from './csv/csv-description.js';
import { moduleDescription } from './module/module-description.js';
import { singerDescription } from './singer/singer-description.js';
import type { SourceDescription } from './source-description.js';
import { sqlDescription } from './sql/sql-description.js';

/**
 * What a configured source says of its type (source-description.ts): besides `createSourceFactory`,
 * the one place that picks by `type`.
 *
 * @example describeSource(config).noCursors.status // "none yet", or why the source keeps no cursor
 */
export function describeSource(config: SourceConfig): SourceDescription {
  switch (config.type) {
    case 'csv':
      return csvDescription(config);
    case 'sql':
      return sqlDescription(config);
    case 'module':
      return moduleDescription(config);
    case 'singer':
      return singerDescription(config);
  }
}
