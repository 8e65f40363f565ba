import type { SourceConfig } from '../../config/schema.js';
import { messageOf } from '../../domain/errors.js';
import { createLogger } from '../../logging/logger.js';
import {
  checkFailed,
  checkOk,
  type SourceCheckContext,
  type SourceCheckResult,
} from '../source-description.js';
import { probeQuery } from './keyset-query.js';
import { connectPg } from './pg-session.js';

/**
 * `doctor`'s check of a SQL source, reading no row: it connects, and each stream's query compiles
 * (run under `LIMIT 0`).
 */
export async function sqlQueryCheck(
  source: Extract<SourceConfig, { type: 'sql' }>,
  context: SourceCheckContext,
): Promise<SourceCheckResult> {
  const url = context.env[source.urlEnv];
  if (!url) return checkFailed(`${source.urlEnv} is not set: it holds the billing database's URL`);
  const session = await connectPg(url, createLogger({ level: 'silent' }));
  try {
    const streams = Object.entries(source.streams).filter(([, stream]) => stream !== undefined);
    for (const [stream, settings] of streams) {
      try {
        await session.query(probeQuery((settings as { query: string }).query));
      } catch (error) {
        return checkFailed(`the ${stream} query does not compile: ${messageOf(error)}`);
      }
    }
    return checkOk(
      `connects; ${streams.map(([s]) => s).join(', ') || 'no'} stream queries compile (limit 0)`,
    );
  } finally {
    await session.end();
  }
}
