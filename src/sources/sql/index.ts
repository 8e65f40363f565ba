/** The SQL source: its factory, its settings schema, the dialects it reads, and the errors it can throw. */
export { dialectForUrl, SQL_DIALECTS } from './dialects.js';
export { SqlSourceError, type SqlSourceErrorCode } from './errors.js';
export type { ConnectSql, SessionOptions, SqlDialect, SqlResult, SqlSession } from './sql-dialect.js';
export {
  parseSqlSettings,
  SQL_SOURCE_FIELDS,
  type SqlSettings,
  type SqlSettingsInput,
  type SqlSourceConfigInput,
} from './sql-settings.js';
export { createSqlSource, type SqlPassSummary, type SqlSource, type SqlSourceProps } from './sql-source.js';
export type { StreamPassStats } from './sql-stream-unit.js';
export type { KeysetCursorState } from './stream-cursor.js';
