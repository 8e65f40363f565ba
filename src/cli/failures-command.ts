import { Command } from 'commander';
import { openStateRuntime, openSyncRuntime, syncServiceOf } from '../app/runtime.js';
import { FILE_FAILURE_STAGE } from '../domain/sync-state.js';
import { printable } from '../logging/printable-text.js';
import type { SourceSummary } from '../sync/run-sync.js';
import type { FailureRetry } from '../sync/sync-service.js';
import { loadCliConfig } from './cli-config.js';
import { EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';

interface FailuresFlags {
  source?: string;
  json?: boolean;
}

/** `failures [--source ID]` lists the records that failed and why; `failures retry` syncs them again. */
export function failuresCommand(): Command {
  const command = new Command('failures')
    .description(
      'list the records (and the files that could not be read) that failed and why (`failures retry` syncs them again)',
    )
    .option('--source <id>', 'only this source')
    .option('--json', 'one JSON object per failure, one per line')
    .action(async (flags: FailuresFlags, cmd: Command) => {
      const loaded = loadCliConfig(cmd);
      const runtime = await openStateRuntime(loaded);
      try {
        const rows = await runtime.repos.failures.open({ sourceId: flags.source });
        if (flags.json) {
          for (const row of rows) process.stdout.write(`${JSON.stringify(row)}\n`);
          return;
        }
        if (rows.length === 0) {
          process.stdout.write('No open failures.\n');
          return;
        }
        for (const f of rows) {
          const where = [f.file, f.line ? `line ${f.line}` : null, f.column].filter(Boolean).join(', ');
          const api = f.status
            ? ` (HTTP ${f.status}${f.apiCode ? ` ${f.apiCode}` : ''})`
            : f.apiCode
              ? ` (${f.apiCode})`
              : '';
          const retry = f.retryable
            ? `retryable, attempt ${f.attempts}`
            : f.stage === FILE_FAILURE_STAGE
              ? 'the file could not be read: fix it or the configuration, drop it again'
              : 'needs a fix first';
          // File names, keys and messages come from the data: escaped, one line each.
          process.stdout.write(
            `${printable(`${f.sourceId} ${f.kind} ${f.sourceKey} [${f.stage}; ${retry}]${where ? ` ${where}` : ''}: ${f.message}${api}`)}\n`,
          );
        }
        process.stdout.write(`${rows.length} open failure(s).\n`);
      } finally {
        await runtime.close();
      }
    });

  command
    .command('retry')
    .description(
      'sync the failed records again from their stored payload (rows refused by validation need corrected data; a file that could not be read is fixed and dropped again)',
    )
    .option('--source <id>', 'only this source')
    .option('--json', 'print one JSON summary object as the last stdout line')
    .action(async (_flags: FailuresFlags, cmd: Command) => {
      // `failures` has the same options: commander may hand them to the parent, so read both levels.
      const flags = cmd.optsWithGlobals<FailuresFlags>();
      const loaded = loadCliConfig(cmd);
      const started = Date.now();
      const runtime = await openSyncRuntime(loaded);
      const summaries: SourceSummary[] = [];
      let needData = 0;
      const rejectedFiles: Array<FailureRetry['rejectedFiles'][number] & { sourceId: string }> = [];
      try {
        const service = syncServiceOf(runtime, loaded.config.sources);
        for (const config of loaded.config.sources.filter((s) => !flags.source || s.id === flags.source)) {
          const result = await service.retryFailures(config.id);
          if (result.summary) summaries.push(result.summary);
          needData += result.needData;
          for (const file of result.rejectedFiles) rejectedFiles.push({ ...file, sourceId: config.id });
        }
      } finally {
        await runtime.close();
      }
      const stats = runtime.targets.stats().requests;
      const summary = jsonSummary(
        summaries,
        { requests: stats.requests, rateLimited: stats.rateLimited },
        Date.now() - started,
      );
      const out = flags.json ? process.stderr : process.stdout;
      out.write(textSummary(summaries, summary, false));
      if (needData > 0) {
        out.write(
          `\n${needData} row(s) refused by validation need corrected data: drop them again (see \`failures\`).\n`,
        );
      }
      if (rejectedFiles.length > 0) out.write(rejectedFilesText(rejectedFiles));
      if (flags.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
      process.exitCode =
        hasFailures(summaries) || needData > 0 || rejectedFiles.length > 0 ? EXIT_ROWS_FAILED : EXIT_OK;
    });
  return command;
}

/**
 * What fixes a file that could not be read at all: a retry has no row of it to send again (none was
 * read), so it says where the file waits and why, and that the file, fixed (or read with a fixed
 * configuration), is dropped again; its failure is resolved once a file of that name is read.
 */
function rejectedFilesText(
  files: ReadonlyArray<FailureRetry['rejectedFiles'][number] & { sourceId: string }>,
): string {
  const lines = files.map(
    (f) =>
      `  ${printable(`${f.sourceId}: ${f.file}${f.setAside ? ` (in ${f.setAside}, its reason in ${f.setAside}.reason.txt)` : ''}: ${f.reason}`)}`,
  );
  return (
    `\n${files.length} file(s) could not be read at all: a retry cannot read them again. Fix each file, or the ` +
    "source's files / format / columns, and drop it again in the drop folder: its failure is resolved once it is read.\n" +
    `${lines.join('\n')}\n`
  );
}
