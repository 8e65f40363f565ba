import type { SourceConfig } from '../../config/schema.js';
import { messageOf } from '../../domain/errors.js';
import { createLogger } from '../../logging/logger.js';
import {
  checkFailed,
  checkOk,
  type SourceCheckContext,
  type SourceCheckResult,
} from '../source-description.js';
import { dialectForUrl } from './dialects.js';
import { probeStatement } from './keyset-query.js';
import type { SqlDialect } from './sql-dialect.js';

/**
 * `doctor`'s check of a SQL source, reading no row: the URL's scheme names a database it reads, it
 * connects, and each stream's query compiles in that database's dialect (run under `LIMIT 0`).
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
      try {
        await session.read(probeStatement((settings as { query: string }).query));
      } catch (error) {
        return checkFailed(`the ${stream} query does not compile: ${messageOf(error)}`);
      }
    }
    return checkOk(
      `connects (${session.server}); ${streams.map(([s]) => s).join(', ') || 'no'} stream queries compile (limit 0)`,
    );
  } finally {
    await session.end();
  }
}
