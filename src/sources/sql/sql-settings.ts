import {
  SQL_SOURCE_FIELDS,
  type SqlSettings,
  type StreamSettings,
  sqlSettingsSchema,
} from '../../config/sql-source-schema.js';
import type { Stream } from '../../domain/records.js';
import { SqlSourceError } from './errors.js';

export {
  type AccountStreamSettings,
  type DocumentStreamSettings,
  SQL_COLUMN_RE,
  SQL_SOURCE_FIELDS,
  type SqlSettings,
  type SqlSettingsInput,
  type StreamSettings,
} from '../../config/sql-source-schema.js';

/** The `sources[]` entry of a SQL source, as the configuration schema gives it (or a test builds it). */
export interface SqlSourceConfigInput {
  id: string;
  /** The environment variable holding the connection URL. */
  urlEnv: string;
  streams?: unknown;
  lookbackSeconds?: number | undefined;
  fullRefresh?: boolean | undefined;
  statementTimeoutMs?: number | undefined;
  batchSize?: number | undefined;
  filesDir?: string | undefined;
  timeZone?: string | undefined;
}

/** Validates and completes a SQL source's settings; every problem is listed in one error. */
export function parseSqlSettings(config: SqlSourceConfigInput): SqlSettings {
  const { id: _id, urlEnv: _urlEnv, ...rest } = config as SqlSourceConfigInput & Record<string, unknown>;
  const known = Object.fromEntries(Object.keys(SQL_SOURCE_FIELDS).map((k) => [k, rest[k]]));
  const result = sqlSettingsSchema.safeParse(known);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.') || '(source)'}: ${i.message}`);
  throw new SqlSourceError('SQL_CONFIG_INVALID', `source "${config.id}": ${problems.join('; ')}`);
}

/** The configured streams in pass order (accounts before the documents that need them). */
export function configuredStreams(settings: SqlSettings): Array<[Stream, StreamSettings]> {
  const out: Array<[Stream, StreamSettings]> = [];
  if (settings.streams.accounts) out.push(['accounts', settings.streams.accounts]);
  if (settings.streams.invoices) out.push(['invoices', settings.streams.invoices]);
  if (settings.streams.creditNotes) out.push(['creditNotes', settings.streams.creditNotes]);
  return out;
}
