import { realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type Clock, systemClock } from '../../domain/clock.js';
import type { Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { CursorStore } from '../ports.js';
import type { Source, SourceUnit } from '../source.js';
import { dialectForUrl } from './dialects.js';
import { SqlSourceError } from './errors.js';
import type { ConnectSql } from './sql-dialect.js';
import {
  configuredStreams,
  parseSqlSettings,
  type SqlSettings,
  type SqlSourceConfigInput,
} from './sql-settings.js';
import { SqlStreamUnit, type StreamPassStats } from './sql-stream-unit.js';

export interface SqlSourceProps {
  /** The `sources[]` entry: `urlEnv`, `streams`, `lookbackSeconds`, `fullRefresh`, ... */
  config: SqlSourceConfigInput;
  /** Where each stream's cursor is kept (the state DB's `cursors` table). */
  cursors: CursorStore;
  logger: Logger;
  /** The environment the connection URL is read from (`env[config.urlEnv]`). */
  env: Readonly<Record<string, string | undefined>>;
  clock?: Clock;
  /** Overrides the configured `batchSize` (rows per page). */
  batchSize?: number;
  /** Opens the pass's connection (default: the URL's dialect's); tests and the bench may count or wrap it. */
  connect?: ConnectSql;
}

/** What the latest (or running) pass read, per stream. */
export interface SqlPassSummary {
  streams: Partial<Record<Stream, StreamPassStats>>;
}

export interface SqlSource extends Source {
  readonly type: 'sql';
  /** The settings as validated, defaults applied. */
  readonly settings: SqlSettings;
  lastPass(): SqlPassSummary;
}

/**
 * A billing database as a source (Postgres, MySQL or MariaDB, as the URL's scheme says): one query
 * per stream, in that database's own dialect, read incrementally by a keyset cursor
 * `(updated_at, id)` from a little before where the last pass stopped (`lookbackSeconds`), in pages
 * of `batchSize` rows, over one dedicated read-only connection per pass.
 *
 * @example
 *   const source = createSqlSource({ config, cursors: new CursorsRepository(db), logger, env });
 *   for await (const unit of source.units()) {
 *     for await (const batch of unit.batches()) await sync(batch);
 *     await unit.complete({ failures }); // the stream's cursor advances only now
 *   }
 *   source.lastPass().streams.invoices?.rowsRead;
 */
export function createSqlSource(props: SqlSourceProps): SqlSource {
  const { config, cursors } = props;
  const settings = parseSqlSettings(config);
  const url = props.env[config.urlEnv];
  if (url === undefined || url.trim() === '') {
    throw new SqlSourceError(
      'SQL_CONFIG_INVALID',
      `source "${config.id}": the environment variable ${config.urlEnv} (urlEnv) is not set; ` +
        'it must hold the billing database URL, like postgres://reader@db.example:5432/billing ' +
        'or mysql://reader@db.example:3306/dolibarr',
    );
  }
  // The scheme chooses the database; an unknown one is said now, not as a protocol error later.
  const dialect = dialectForUrl(url, config.id);
  const clock = props.clock ?? systemClock;
  const connect = props.connect ?? dialect.connect;
  const log = props.logger.child({ source: config.id });
  let summary: SqlPassSummary = { streams: {} };

  async function* units(signal?: AbortSignal): AsyncGenerator<SourceUnit> {
    summary = { streams: {} };
    const filesRealPath = settings.filesDir ? await filesFolder(config.id, settings.filesDir) : null;
    const session = await connect(url!, { statementTimeoutMs: settings.statementTimeoutMs }, log);
    log.debug({ server: session.server }, 'billing database connected');
    try {
      for (const [stream, streamSettings] of configuredStreams(settings)) {
        if (signal?.aborted) return;
        const unit = new SqlStreamUnit({
          sourceId: config.id,
          stream,
          settings: streamSettings,
          lookbackSeconds: settings.lookbackSeconds,
          fullRefresh: settings.fullRefresh,
          statementTimeoutMs: settings.statementTimeoutMs,
          batchSize: props.batchSize ?? settings.batchSize,
          session,
          keyset: dialect.keyset,
          timeZone: settings.timeZone,
          cursors,
          filesRealPath,
          clock,
          logger: log,
        });
        summary.streams[stream] = unit.stats;
        yield unit;
      }
    } finally {
      await session
        .end()
        .catch((error: Error) => log.warn({ err: error.message }, 'closing the connection failed'));
    }
  }

  return { id: config.id, type: 'sql', settings, units, lastPass: () => summary };
}

async function filesFolder(sourceId: string, filesDir: string): Promise<string> {
  try {
    return await realpath(resolve(filesDir));
  } catch (error) {
    throw new SqlSourceError(
      'SQL_CONFIG_INVALID',
      `source "${sourceId}": filesDir ${filesDir} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`,
      { cause: error },
    );
  }
}
