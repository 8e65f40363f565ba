import { CursorsRepository } from './cursors.js';
import type { StateDb } from './database.js';
import { FailuresRepository } from './failures.js';
import { PendingWritesRepository } from './pending-writes.js';
import { RecordMapRepository } from './record-map.js';
import { RunRecordsRepository } from './run-records.js';
import { RunsRepository } from './runs.js';
import { withStateErrors } from './state-errors.js';

/**
 * The repositories a pass reads and writes, over one state DB: what the sync engine's `SyncState`
 * port asks for (`sync/ports.ts`; the composition root checks that they fit). What the driver throws
 * comes out as a `StateDbError` (see `withStateErrors`).
 */
export function syncStateRepos(db: StateDb) {
  return {
    recordMap: withStateErrors(new RecordMapRepository(db)),
    pending: withStateErrors(new PendingWritesRepository(db)),
    failures: withStateErrors(new FailuresRepository(db)),
    runs: withStateErrors(new RunsRepository(db)),
    cursors: withStateErrors(new CursorsRepository(db)),
    runRecords: withStateErrors(new RunRecordsRepository(db)),
  };
}

export type SyncStateRepos = ReturnType<typeof syncStateRepos>;
