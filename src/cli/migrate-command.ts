import { Command } from 'commander';
import { migrateState } from '../app/state-runtime.js';
import { loadCliConfig } from './cli-config.js';

/** `migrate`: applies the state DB migrations (the other commands apply them too). */
export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply the state DB migrations (Postgres when DATABASE_URL is set, else the embedded DB)')
    .action(async (_flags: unknown, command: Command) => {
      const { kind, applied } = await migrateState(loadCliConfig(command));
      process.stdout.write(
        applied.length === 0
          ? `State DB (${kind}) is up to date.\n`
          : `Applied ${applied.length} migration(s) to the ${kind} state DB: ${applied.join(', ')}\n`,
      );
    });
}
