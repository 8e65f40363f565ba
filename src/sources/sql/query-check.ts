import type { SourceConfig } from '../../config/schema.js';
import { messageOf } from '../../domain/errors.js';
import type { Stream } from '../../domain/records.js';
import { createLogger } from '../../logging/logger.js';
import {
  checkFailed,
  checkOk,
  type SourceCheckContext,
  type SourceCheckResult,
} from '../source-description.js';
import { dialectForUrl } from './dialects.js';
import { probeStatement } from './keyset-query.js';
import { resolveColumns } from './row-records.js';
import type { SqlDialect } from './sql-dialect.js';
import type { StreamSettings } from './sql-settings.js';

/**
 * `doctor`'s check of a SQL source, reading no row: the URL's scheme names a database it reads, it
 * connects, and each stream's query compiles in that database's dialect (run under `LIMIT 0`) and
 * returns the contract's required columns and the cursor columns, as a pass checks them.
 */
export async function sqlQueryCheck(
  source: Extract<SourceConfig, { type: 'sql' }>,
  context: SourceCheckContext,
): Promise<SourceCheckResult> {
  const url = context.env[source.urlEnv];
  if (!url) return checkFailed(`${source.urlEnv} is not set: it holds the billing database's URL`);
  let dialect: SqlDialect;
  try {
    dialect = dialectForUrl(url, source.id);
  } catch (error) {
    return checkFailed(messageOf(error));
  }
  const session = await dialect.connect(
    url,
    { statementTimeoutMs: source.statementTimeoutMs },
    createLogger({ level: 'silent' }),
  );
  try {
    const streams = Object.entries(source.streams).filter(([, stream]) => stream !== undefined);
    for (const [stream, settings] of streams) {
      let fields: string[];
      try {
        const probe = await session.read(probeStatement((settings as StreamSettings).query));
        fields = probe.fields.map((f) => f.name);
      } catch (error) {
        return checkFailed(`the ${stream} query does not compile: ${messageOf(error)}`);
      }
      // The columns a pass needs, as the pass checks them before reading a row.
      const columns = resolveColumns(stream as Stream, fields, settings as StreamSettings);
      if (!columns.ok) return checkFailed(columns.reason);
    }
    return checkOk(
      `connects (${session.server}); ${streams.map(([s]) => s).join(', ') || 'no'} stream queries compile (limit 0) and return the columns they need`,
    );
  } finally {
    await session.end();
  }
}
