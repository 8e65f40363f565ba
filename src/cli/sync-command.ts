import { Command } from 'commander';
import { checkAccess, openSyncRuntime, syncServiceOf } from '../app/runtime.js';
import { loadConfig } from '../config/load.js';
import type { SourceSummary } from '../sync/run-sync.js';
import { CliError, EXIT_CANNOT_RUN, EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { faultLine } from './fault-line.js';
import { ProgressLine } from './progress.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';

interface SyncFlags {
  once?: boolean;
  source?: string;
  dryRun?: boolean;
  json?: boolean;
}

const readAnything = (summaries: readonly SourceSummary[]): boolean =>
  summaries.some(
    (s) =>
      s.abandoned.length > 0 ||
      Object.values(s.counts).some((c) => c.created + c.updated + c.unchanged + c.failed > 0),
  );

/** `sync --once`: one full pass of every configured source (or one), in this process. */
export function syncCommand(): Command {
  return new Command('sync')
    .description('sync every configured source (or one) once, in this process; no Redis needed')
    .option('--once', 'one full pass, then exit (the schedules run in `worker`)')
    .option('--source <id>', 'only this source')
    .option('--dry-run', 'plan and print the operations without any write call')
    .option('--json', 'print one JSON summary object as the last stdout line')
    .addHelpText(
      'after',
      '\nExit codes: 0 every row synced or unchanged; 2 the pass finished but some rows failed (listed); 1 it could not run.',
    )
    .action(async (flags: SyncFlags, command: Command) => {
      if (!flags.once)
        throw new CliError('`sync` needs --once (the scheduled, long-running mode is `worker`)');
      const loaded = loadConfig({ file: command.optsWithGlobals().config });
      const sources = loaded.config.sources.filter((s) => !flags.source || s.id === flags.source);
      if (sources.length === 0) {
        throw new CliError(
          flags.source ? `no source "${flags.source}" in the configuration` : 'no source is configured',
        );
      }
      const started = Date.now();
      const runtime = await openSyncRuntime(loaded);
      const progress = new ProgressLine(process.stderr, () => runtime.limiter.stats().waitedMsTotal);
      const summaries: SourceSummary[] = [];
      let stopped: unknown = null;
      try {
        const service = syncServiceOf(runtime, loaded.config.sources, progress.onEvent);
        for (const config of sources) {
          summaries.push(
            ...(await service.syncSource(config.id, { trigger: 'once', dryRun: flags.dryRun ?? false })),
          );
        }
        // A pass that read nothing sent nothing: one read checks that the API and the token answer
        // (an unchanged re-run, which read its rows, still costs no call).
        if (!readAnything(summaries)) await checkAccess(runtime);
      } catch (error) {
        // The pass stopped (the API, the credentials, the state DB): what was done is still reported.
        stopped = error;
      } finally {
        progress.finish();
        await runtime.close();
      }
      const stats = runtime.client.stats;
      const summary = jsonSummary(
        summaries,
        { requests: stats.requests, rateLimited: stats.rateLimited },
        Date.now() - started,
      );
      const report = textSummary(summaries, summary, flags.dryRun ?? false);
      // With --json, stdout carries only the JSON line; the readable report goes to stderr.
      if (flags.json) process.stderr.write(report);
      else process.stdout.write(report);
      if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
      if (stopped) throw new CliError(faultLine(stopped, loaded.config.api.baseUrl), EXIT_CANNOT_RUN);
      process.exitCode = hasFailures(summaries) ? EXIT_ROWS_FAILED : EXIT_OK;
    });
}
