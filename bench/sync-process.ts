/**
 * One pass in a process of its own, as `sync --once` runs it: the CLI's heap settings
 * (src/cli/heap-growth.ts), open + migrate the state DB, one pass of the drop folder, close. Started by `bench/sync-state-db.ts` with BENCH_SYNC_PROCESS (JSON of
 * {@link SyncProcessProps}); prints one JSON line ({@link SyncProcessFigures}). Loading the modules
 * (PGlite's included) is before the clock, as for `pg`: under tsx it costs what it would not once
 * built.
 */
import { StaticTokenProvider } from '../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../src/api/client.js';
import { createRateLimiter } from '../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../src/app/sync-api.js';
import { capYoungGeneration, limitHeapGrowth } from '../src/cli/heap-growth.js';
import { systemClock } from '../src/domain/clock.js';
import { createLogger } from '../src/logging/logger.js';
import { createCsvSource } from '../src/sources/csv/index.js';
import { openStateDatabase } from '../src/state/database.js';
import { DropFilesRepository } from '../src/state/drop-files.js';
import { syncStateRepos } from '../src/state/repositories.js';
import { runSync } from '../src/sync/run-sync.js';

export interface SyncProcessProps {
  databaseUrl: string | null;
  schema?: string;
  dataDir: string;
  dropDir: string;
  baseUrl: string;
  accessToken: string;
  organizationId: string;
}

export interface SyncProcessFigures {
  origin: string | undefined;
  openMs: number;
  passMs: number;
  records: number;
  apiCalls: number;
  peakRssMb: number;
}

limitHeapGrowth();
capYoungGeneration();
const props = JSON.parse(process.env.BENCH_SYNC_PROCESS ?? '{}') as SyncProcessProps;
if (!props.databaseUrl) await import('@electric-sql/pglite');
const logger = createLogger({ level: 'error' });
const started = performance.now();
const state = await openStateDatabase({
  databaseUrl: props.databaseUrl,
  dataDir: props.dataDir,
  ...(props.schema ? { schema: props.schema } : {}),
});
const opened = performance.now();
let apiCalls = 0;
const client = new ReceivablesClient({
  baseUrl: props.baseUrl,
  tokens: new StaticTokenProvider({ accessToken: props.accessToken }),
  limiter: createRateLimiter({}),
  logger,
  fetch: (input, init) => {
    apiCalls++;
    return fetch(input, init);
  },
  concurrency: 8,
});
const config = {
  id: 'bench',
  type: 'csv' as const,
  dropDir: props.dropDir,
  stableSeconds: 0,
  mapping: {},
  strictColumns: false,
};
const summary = await runSync({
  source: createCsvSource({ config, clock: systemClock, logger, ledger: new DropFilesRepository(state.db) }),
  connectionId: 'bench',
  api: new ClientSyncApi(client, props.organizationId),
  state: syncStateRepos(state.db),
  logger,
});
const passed = performance.now();
await client.close();
await state.close();
const figures: SyncProcessFigures = {
  origin: state.origin,
  openMs: opened - started,
  passMs: passed - opened,
  records: Object.values(summary.counts).reduce(
    (n, c) => n + c.created + c.updated + c.unchanged + c.failed,
    0,
  ),
  apiCalls,
  peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
};
console.log(JSON.stringify(figures));
