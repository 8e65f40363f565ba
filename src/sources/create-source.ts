import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { SourceConfig } from '../config/schema.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { createCsvSource } from './csv/index.js';
import { restoreClaimedFiles } from './csv/interrupted-claims.js';
import { createModuleSource } from './module/index.js';
import type { CursorStore, DropFileLedger } from './ports.js';
import { createSingerSource, type SingerInput } from './singer/index.js';
import type { Source } from './source.js';
import { createSqlSource } from './sql/index.js';

/** What the sources of a configuration are built from; the composition root (`src/app/`) gives it. */
export interface SourceFactoryDeps {
  logger: Logger;
  /** Where SQL and module sources keep their stream cursors. */
  cursors: CursorStore;
  /** Where CSV sources record what became of each file. */
  ledger: DropFileLedger;
  /** Where SQL sources read their connection URL (`urlEnv`) and module sources their settings. */
  env: Readonly<Record<string, string | undefined>>;
  clock?: Clock;
  /**
   * A folder of the daemon's own for Singer sources' per-run files (`--state`, the catalog): the
   * composition root gives `<dataDir>/singer`; default a folder under the system's temporary one.
   */
  workDir?: string;
  /** Messages for the Singer sources fed by `receivables-sync target` (its stdin), if any. */
  singerInput?: SingerInput;
}

/** Builds the source of a configuration entry, and repairs what a cut-short pass of it left. */
export interface SourceFactory {
  /** `dryRun`: a dry run must not claim, archive or record files. */
  create(config: SourceConfig, options: { dryRun: boolean }): Source;
  /**
   * Called under the source lock after a pass of the source that never finished (its process was
   * killed): puts back what that pass held (a CSV source's claimed files), so the next pass takes
   * it at once. Returns the names of the units put back.
   */
  recoverInterrupted(config: SourceConfig): Promise<string[]>;
}

export function createSourceFactory(deps: SourceFactoryDeps): SourceFactory {
  const clock = deps.clock ?? systemClock;
  return {
    create(config, options) {
      const logger = deps.logger.child({ sourceId: config.id });
      switch (config.type) {
        case 'csv':
          return createCsvSource({
            config,
            clock,
            logger,
            ledger: options.dryRun ? readOnly(deps.ledger) : deps.ledger,
            dryRun: options.dryRun,
          });
        case 'sql':
          return createSqlSource({ config, cursors: deps.cursors, logger, env: deps.env, clock });
        case 'module':
          return createModuleSource({ config, cursors: deps.cursors, logger, env: deps.env, clock });
        case 'singer':
          return createSingerSource({
            config,
            cursors: deps.cursors,
            logger,
            workDir: deps.workDir ?? join(tmpdir(), 'receivables-sync-singer'),
            ...(deps.singerInput ? { input: deps.singerInput } : {}),
          });
      }
    },
    async recoverInterrupted(config) {
      if (config.type !== 'csv') return [];
      return restoreClaimedFiles(config, deps.logger, clock);
    },
  };
}

/** A dry run recognises files already synced but records nothing. */
const readOnly = (ledger: DropFileLedger): DropFileLedger => ({
  seen: (sourceId, checksum) => ledger.seen(sourceId, checksum),
  record: async () => {},
});
