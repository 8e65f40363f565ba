import type { Logger } from 'pino';
import type { LoadedConfig } from '../config/load.js';
import { AppError } from '../domain/errors.js';
import { migrateToLatest, openStateDatabase, type StateDatabase } from '../state/database.js';
import { StateDbInUseError } from '../state/embedded-lock.js';
import { type SyncStateRepos, syncStateRepos } from '../state/repositories.js';
import { RunLogsRepository } from '../state/run-logs.js';
import type { StateScopes } from '../state/scopes.js';
import { StateDbError } from '../state/state-errors.js';
import { recordedScopes } from './api-targets.js';
import { runLogging } from './run-log.js';

/** What the state-only commands need (`failures`, `status`, `migrate`). */
export interface StateRuntime {
  loaded: LoadedConfig;
  logger: Logger;
  database: StateDatabase;
  repos: SyncStateRepos;
  close(): Promise<void>;
}

/**
 * The state DB and the logger of a command or daemon. The logger (made here from `log.level` and
 * `log.format`, or `given`) also feeds the run log: the lines of each pass kept in the state DB
 * for its page on the dashboard (see `runLogging`).
 */
export async function openStateRuntime(
  loaded: LoadedConfig,
  given?: Logger,
  /** Each source's scope of the state DB (the sync runtime's, filled as targets resolve); default: `recordedScopes`. */
  known?: StateScopes,
): Promise<StateRuntime> {
  const { logger, runLog } = runLogging(loaded, given);
  let database: StateDatabase;
  try {
    database = await openStateDatabase({
      ...loaded.config.state,
      onIdleError: (error) =>
        logger.warn(
          { event: 'state-db.connection-lost', err: error.message },
          'state DB connection lost: reconnecting on next use',
        ),
    });
  } catch (error) {
    // Held by another process (embedded DB), or its disk full: their own messages say what to do.
    if (error instanceof StateDbInUseError) throw error;
    if (error instanceof AppError && error.code === 'STATE_DB_DISK_FULL') throw error;
    throw StateDbError.ofOpening(error);
  }
  const { db } = database;
  runLog.attach(new RunLogsRepository(db));
  // Each source read in the scope its configuration or last run says (none yet: the unstamped one).
  const scopes =
    known ??
    (await recordedScopes(db, loaded).catch(async (error: unknown) => {
      await database.close();
      throw error;
    }));
  return {
    loaded,
    logger,
    database,
    repos: syncStateRepos(db, scopes),
    // The run log's last lines are written before the DB closes.
    close: async () => {
      await runLog.close();
      await database.close();
    },
  };
}

/** `migrate`: applies the pending migrations of the configured state DB; returns their names. */
export async function migrateState(loaded: LoadedConfig): Promise<{ kind: string; applied: string[] }> {
  const { state } = loaded.config;
  const database = await openStateDatabase({ ...state, migrate: false });
  try {
    return { kind: database.kind, applied: await migrateToLatest(database.db, state.schema) };
  } finally {
    await database.close();
  }
}
