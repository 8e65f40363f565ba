import { Command } from 'commander';
import { loadConfig } from '../config/load.js';
import { migrateToLatest, openStateDatabase } from '../state/database.js';

/** `migrate`: applies the state DB migrations (the other commands apply them too). */
export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply the state DB migrations (Postgres when DATABASE_URL is set, else the embedded DB)')
    .action(async (_flags: unknown, command: Command) => {
      const { config } = loadConfig({ file: command.optsWithGlobals().config });
      const state = await openStateDatabase({ ...config.state, migrate: false });
      try {
        const applied = await migrateToLatest(state.db, config.state.schema);
        process.stdout.write(
          applied.length === 0
            ? `State DB (${state.kind}) is up to date.\n`
            : `Applied ${applied.length} migration(s) to the ${state.kind} state DB: ${applied.join(', ')}\n`,
        );
      } finally {
        await state.close();
      }
    });
}
