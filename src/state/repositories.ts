import { CursorsRepository } from './cursors.js';
import type { StateDb } from './database.js';
import { FailuresRepository } from './failures.js';
import { PendingWritesRepository } from './pending-writes.js';
import { RecordMapRepository } from './record-map.js';
import { RunRecordsRepository } from './run-records.js';
import { RunsRepository } from './runs.js';
import { type StateScopes, UNSTAMPED_SCOPES } from './scopes.js';
import { withStateErrors } from './state-errors.js';

/**
 * The repositories a pass reads and writes, over one state DB: what the sync engine's `SyncState`
 * port asks for (`sync/ports.ts`; the composition root checks that they fit). What the driver throws
 * comes out as a `StateDbError` (see `withStateErrors`).
 *
 * `scopes`: the connection and organization each source syncs into; its record map, pending writes,
 * cursors and open failures are kept there, and its runs record it (see `state/scopes.ts`). Default:
 * every source in `UNSTAMPED_SCOPE` (the state as it was before scopes).
 */
export function syncStateRepos(db: StateDb, scopes: StateScopes = UNSTAMPED_SCOPES) {
  return {
    recordMap: withStateErrors(new RecordMapRepository(db, scopes)),
    pending: withStateErrors(new PendingWritesRepository(db, scopes)),
    failures: withStateErrors(new FailuresRepository(db, scopes)),
    runs: withStateErrors(new RunsRepository(db, scopes)),
    cursors: withStateErrors(new CursorsRepository(db, scopes)),
    runRecords: withStateErrors(new RunRecordsRepository(db, scopes)),
  };
}

export type SyncStateRepos = ReturnType<typeof syncStateRepos>;
