import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { CursorsRepository } from '../state/cursors.js';
import type { StateDb } from '../state/database.js';
import { DropFilesRepository } from '../state/drop-files.js';
import { createCsvSource } from './csv/index.js';
import type { DropFileLedger } from './csv/ledger.js';
import { createModuleSource } from './module/index.js';
import type { Source } from './source.js';
import { createSqlSource } from './sql/index.js';

export interface CreateSourceDeps {
  logger: Logger;
  db: StateDb;
  /** A dry run must not claim, archive or record files. */
  dryRun: boolean;
  clock?: Clock;
  /** Where SQL sources read their connection URL (`urlEnv`); default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Builds the source of one configuration entry. */
export function createSource(config: SourceConfig, deps: CreateSourceDeps): Source {
  const logger = deps.logger.child({ sourceId: config.id });
  switch (config.type) {
    case 'csv':
      return createCsvSource({
        config,
        clock: deps.clock ?? systemClock,
        logger,
        ledger: deps.dryRun ? readOnly(new DropFilesRepository(deps.db)) : new DropFilesRepository(deps.db),
        dryRun: deps.dryRun,
      });
    case 'sql':
      return createSqlSource({
        config,
        cursors: new CursorsRepository(deps.db),
        logger,
        env: deps.env ?? process.env,
        clock: deps.clock ?? systemClock,
      });
    case 'module':
      return createModuleSource({
        config,
        cursors: new CursorsRepository(deps.db),
        logger,
        env: deps.env ?? process.env,
        clock: deps.clock ?? systemClock,
      });
  }
}

/** A dry run recognises files already synced but records nothing. */
const readOnly = (ledger: DropFileLedger): DropFileLedger => ({
  seen: (sourceId, checksum) => ledger.seen(sourceId, checksum),
  record: async () => {},
});
