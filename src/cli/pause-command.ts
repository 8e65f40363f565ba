import { Command } from 'commander';
import { openStateRuntime } from '../app/state-runtime.js';
import type { LoadedConfig } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { printable } from '../logging/printable-text.js';
import { PausedSources } from '../state/paused-sources.js';
import { loadCliConfig } from './cli-config.js';
import { CliError } from './errors.js';
import { commandLineUser, invocation } from './invocation.js';

interface PauseFlags {
  source?: string;
  reason?: string;
}

/** The source a command names (`--source ID`, required), from the configuration. */
function namedSource(loaded: LoadedConfig, command: string, sourceId: string | undefined): SourceConfig {
  if (!sourceId) throw new CliError(`${command} needs --source ID`);
  const config = loaded.config.sources.find((s) => s.id === sourceId);
  if (!config) throw new CliError(`no source "${sourceId}" in the configuration`);
  return config;
}

/**
 * `pause --source ID [--reason TEXT]`: the source's `paused` flag, as the dashboard's Pause sets it
 * (`PausedSources.set`): the worker runs it no more (schedules, drop-folder polling, queued jobs),
 * the dashboard refuses its actions and `sync --once` skips it (exit 1 naming it), until `resume`.
 */
export function pauseCommand(): Command {
  return new Command('pause')
    .description(
      'pause a source: no schedule, drop-folder poll, dashboard action or `sync --once` runs it until `resume`',
    )
    .option('--source <id>', 'the source (required)')
    .option('--reason <text>', 'why, kept with the pause (shown by `status` and the dashboard)')
    .action(async (flags: PauseFlags, cmd: Command) => {
      const loaded = loadCliConfig(cmd);
      const config = namedSource(loaded, 'pause', flags.source);
      const why = flags.reason?.trim();
      const runtime = await openStateRuntime(loaded);
      try {
        await new PausedSources(runtime.database.db).set(config.id, config.type, true, {
          by: 'user',
          reason: `paused by ${commandLineUser()} from the command line${why ? `: ${why}` : ''}`,
        });
      } finally {
        await runtime.close();
      }
      process.stdout.write(
        `${printable(`${config.id} is paused: no schedule, drop-folder poll, dashboard action or \`sync --once\` runs it until \`${invocation()} resume --source ${config.id}\`.`)}\n`,
      );
    });
}

/**
 * `resume --source ID`: clears the `paused` flag, whoever set it (a user, or the automatic pause
 * after failed runs, whose count starts anew), as the dashboard's Resume does.
 */
export function resumeCommand(): Command {
  return new Command('resume')
    .description('resume a paused source (paused by a user, or automatically after failed runs)')
    .option('--source <id>', 'the source (required)')
    .action(async (flags: Pick<PauseFlags, 'source'>, cmd: Command) => {
      const loaded = loadCliConfig(cmd);
      const config = namedSource(loaded, 'resume', flags.source);
      const runtime = await openStateRuntime(loaded);
      let was: string | null;
      try {
        const paused = new PausedSources(runtime.database.db);
        const pause = (await paused.list()).get(config.id);
        // Every reason kept says it: `paused by alice from the dashboard`, `paused automatically after ...`.
        was = pause
          ? (pause.reason ?? (pause.by === 'auto' ? 'paused automatically' : 'paused by a user'))
          : null;
        if (pause) await paused.set(config.id, config.type, false);
      } finally {
        await runtime.close();
      }
      process.stdout.write(
        `${printable(
          was === null
            ? `${config.id} was not paused: nothing changed.`
            : `${config.id} is resumed (it was ${was}); its next scheduled pass, or \`sync --once\`, syncs it.`,
        )}\n`,
      );
    });
}
