import { Command } from 'commander';
import { openSyncRuntime, syncServiceOf } from '../app/runtime.js';
import { requireSources } from '../config/load.js';
import { targetSourceOf } from '../config/target-source.js';
import type { SourceSummary } from '../sync/run-sync.js';
import { loadCliConfig } from './cli-config.js';
import { CliError, EXIT_CANNOT_RUN, EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { faultLine } from './fault-line.js';
import { ProgressLine } from './progress.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';

interface TargetFlags {
  source?: string;
}

/**
 * `target`: a Singer target (loader). Reads a tap's messages on stdin
 * (`tap-stripe --config c.json | receivables-sync target --source stripe`) into a `type: singer`
 * source configured without `command`; writes each STATE's value on stdout once every record before
 * it is synced or recorded as a failure (the orchestrator, Meltano, stores the last one and gives it
 * back to the tap); progress and the summary go to stderr. Exit codes as `sync --once`.
 */
export function targetCommand(): Command {
  return new Command('target')
    .description('a Singer target: sync the Singer messages read on stdin into a `type: singer` source')
    .option(
      '--source <id>',
      'the `type: singer` source the messages are for (default: the only one without command)',
    )
    .addHelpText(
      'after',
      '\nExample: tap-stripe --config tap.json --state state.json | receivables-sync target --source stripe > state-out.jsonl' +
        '\nstdout: each STATE value, once everything before it is synced or recorded as a failure; stderr: progress and the summary.' +
        '\nExit codes: 0 every record synced or unchanged; 2 some records failed (listed); 1 it could not run (a line that is not a Singer message, the API).',
    )
    .action(async (flags: TargetFlags, command: Command) => {
      await runTarget(flags, command);
    });
}

async function runTarget(flags: TargetFlags, command: Command): Promise<void> {
  const loaded = loadCliConfig(command);
  const config = targetSourceOf(requireSources(loaded), flags.source);
  const started = Date.now();
  const runtime = await openSyncRuntime(loaded);
  const progress = new ProgressLine({
    stream: process.stderr,
    limiter: () => runtime.limiter.stats(),
    requests: () => runtime.targets.stats().requests.requests,
  });
  const summaries: SourceSummary[] = [];
  let stopped: unknown = null;
  try {
    const service = syncServiceOf(runtime, loaded.config.sources, progress.onEvent, {
      stream: process.stdin,
      onState: (value) => writeLine(JSON.stringify(value)),
    });
    summaries.push(
      ...(await service.syncSource(config.id, {
        trigger: 'target',
        dryRun: false,
        onStopped: (partial) => summaries.push(partial),
      })),
    );
  } catch (error) {
    stopped = error;
  } finally {
    progress.finish();
    await runtime.close();
  }
  const stats = runtime.targets.stats().requests;
  const summary = jsonSummary(
    summaries,
    { requests: stats.requests, rateLimited: stats.rateLimited },
    Date.now() - started,
  );
  process.stderr.write(textSummary(summaries, summary, false));
  if (stopped)
    throw new CliError(faultLine(stopped, loaded.config.api.baseUrl), EXIT_CANNOT_RUN, {
      code: 'CLI_SOURCES_NOT_SYNCED',
    });
  process.exitCode = hasFailures(summaries) ? EXIT_ROWS_FAILED : EXIT_OK;
}

/** Writes a line on stdout, waiting for the pipe when it is full (a slow reader is never lost). */
function writeLine(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(`${text}\n`, (error) => (error ? reject(error) : resolve()));
  });
}
