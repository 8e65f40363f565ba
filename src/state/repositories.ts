import { CursorsRepository } from './cursors.js';
import type { StateDb } from './database.js';
import { FailuresRepository } from './failures.js';
import { PendingWritesRepository } from './pending-writes.js';
import { RecordMapRepository } from './record-map.js';
import { RunRecordsRepository } from './run-records.js';
import { RunsRepository } from './runs.js';
import { type StateScopes, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

/**
 * The repositories a pass reads and writes, over one state DB: what the sync engine's `SyncState`
 * port asks for (`sync/ports.ts`; the composition root checks that they fit). Their statements run
 * through `calls` (default: the retrying ones): what the driver throws comes out as a
 * `StateDbError`, and the idempotent statements run again when their connection was lost (each
 * repository says which do; see `StateCalls`).
 *
 * `scopes`: the connection and organization each source syncs into; its record map, pending writes,
 * cursors and open failures are kept there, and its runs record it (see `state/scopes.ts`). Default:
 * every source in `UNSTAMPED_SCOPE` (the state as it was before scopes).
 */
export function syncStateRepos(
  db: StateDb,
  scopes: StateScopes = UNSTAMPED_SCOPES,
  calls: StateCalls = new StateCalls(),
) {
  return {
    recordMap: new RecordMapRepository(db, scopes, calls),
    pending: new PendingWritesRepository(db, scopes, calls),
    failures: new FailuresRepository(db, scopes, calls),
    runs: new RunsRepository(db, scopes, calls),
    cursors: new CursorsRepository(db, scopes, calls),
    runRecords: new RunRecordsRepository(db, scopes, calls),
  };
}

export type SyncStateRepos = ReturnType<typeof syncStateRepos>;
