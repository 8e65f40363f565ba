import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { packageRoot } from '../config/paths.js';
import { messageOf } from '../domain/errors.js';
import { terminalStyle } from '../logging/terminal-style.js';
import { authCommand } from './auth-command.js';
import type { GlobalFlags } from './cli-config.js';
import { dashboardCommand } from './dashboard-command.js';
import { demoCommand } from './demo-command.js';
import { doctorCommand } from './doctor-command.js';
import { EXIT_CANNOT_RUN, exitCodeOf } from './errors.js';
import { failuresCommand } from './failures-command.js';
import { migrateCommand } from './migrate-command.js';
import { pauseCommand, resumeCommand } from './pause-command.js';
import { reconcileCommand } from './reconcile-command.js';
import { sandboxCommand } from './sandbox-command.js';
import { statusCommand } from './status-command.js';
import { syncCommand } from './sync-command.js';
import { targetCommand } from './target-command.js';
import { workerCommand } from './worker-command.js';

/** The `receivables-sync` program: one subcommand per file in this folder. */
export function buildProgram(): Command {
  return new Command('receivables-sync')
    .description(
      'Keep a receivables-management service in sync with your billing data through its Public API.',
    )
    .option(
      '-c, --config <file>',
      'configuration file (else $RECEIVABLES_SYNC_CONFIG, else ./receivables-sync.yaml)',
    )
    .addOption(
      new Option(
        '--log-format <format>',
        'how logs (stderr) look: auto = readable lines on a terminal, JSON lines otherwise (else $LOG_FORMAT, else log.format)',
      ).choices(['auto', 'json', 'pretty']),
    )
    .option(
      '--no-color',
      'no colours, even on a terminal (colours are never used in a pipe, a file, --json output, or under $NO_COLOR)',
    )
    .version(packageVersion(), '-V, --version', 'print the version of receivables-sync')
    .showHelpAfterError()
    .addCommand(syncCommand())
    .addCommand(targetCommand())
    .addCommand(doctorCommand())
    .addCommand(workerCommand())
    .addCommand(reconcileCommand())
    .addCommand(failuresCommand())
    .addCommand(statusCommand())
    .addCommand(pauseCommand())
    .addCommand(resumeCommand())
    .addCommand(authCommand())
    .addCommand(dashboardCommand())
    .addCommand(demoCommand())
    .addCommand(sandboxCommand())
    .addCommand(migrateCommand());
}

export async function run(argv: readonly string[]): Promise<number> {
  const program = buildProgram().exitOverride();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_CANNOT_RUN;
    const style = terminalStyle(process.stderr, program.opts<GlobalFlags>().color !== false);
    process.stderr.write(`${style.tone('error', 'receivables-sync:')} ${messageOf(error)}\n`);
    return exitCodeOf(error);
  }
}

/** The `version` of the package.json this CLI was built from (`--version`). */
function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as {
    version?: unknown;
  };
  return typeof manifest.version === 'string' ? manifest.version : 'unknown';
}
