import { Command } from 'commander';
import { openSyncRuntime, syncServiceOf } from '../app/runtime.js';
import { openStateRuntime } from '../app/state-runtime.js';
import { FILE_FAILURE_STAGE } from '../domain/sync-state.js';
import { printable } from '../logging/printable-text.js';
import type { FailuresRepository } from '../state/failures.js';
import type { SourceSummary } from '../sync/run-sync.js';
import type { FailureRetry } from '../sync/sync-service.js';
import { loadCliConfig } from './cli-config.js';
import { CliError, EXIT_CANNOT_RUN, EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { commandLineUser } from './invocation.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';

interface FailuresFlags {
  source?: string;
  json?: boolean;
}

/**
 * `failures [--source ID]` lists the records that failed and why; `failures retry` syncs them
 * again; `failures dismiss` closes those that need nothing more.
 */
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
            `${printable(`#${f.id} ${f.sourceId} ${f.kind} ${f.sourceKey} [${f.stage}; ${retry}]${where ? ` ${where}` : ''}: ${f.message}${api}`)}\n`,
          );
        }
        process.stdout.write(
          `${rows.length} open failure(s). \`failures retry\` syncs them again; \`failures dismiss #ID... --reason TEXT\` closes those that need nothing more.\n`,
        );
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

  command
    .command('dismiss')
    .description(
      'close open failures that need nothing more (fixed by hand on the service, a row dropped for good): no longer open, kept in the history with the reason, as the dashboard does',
    )
    .argument('[ids...]', 'failure ids, as `failures` lists them (#12 or 12)')
    .option('--reason <text>', 'why (required, kept in the history)')
    .option('--source <id>', 'only failures of this source')
    .option('--all', 'every open failure (of --source, else of every source)')
    .option('--json', 'print {"dismissed":n,"ids":[...],"notOpen":[...]} on stdout')
    .action(async (ids: string[], _flags: DismissFlags, cmd: Command) => {
      const flags = cmd.optsWithGlobals<DismissFlags>();
      const reason = flags.reason?.trim() ?? '';
      if (reason.length === 0 || reason.length > MAX_REASON)
        throw new CliError(
          `dismiss needs --reason TEXT (1 to ${MAX_REASON} characters): it is kept in the history`,
        );
      const wanted = ids.map((id) => id.replace(/^#/, ''));
      const bad = wanted.filter((id) => !/^\d{1,18}$/.test(id));
      if (bad.length > 0)
        throw new CliError(`not a failure id: ${bad.join(', ')} (\`failures\` lists them: #12)`);
      if ((wanted.length === 0) === !flags.all)
        throw new CliError('dismiss needs the failure ids (`failures` lists them), or --all');
      const loaded = loadCliConfig(cmd);
      if (flags.source && !loaded.config.sources.some((s) => s.id === flags.source))
        throw new CliError(`no source "${flags.source}" in the configuration`);
      const runtime = await openStateRuntime(loaded);
      let result: { dismissed: number; ids: string[]; notOpen: string[] };
      try {
        result = await dismissFailures(runtime.repos.failures, {
          ids: flags.all ? undefined : wanted,
          sourceId: flags.source,
          dismissal: { reason, by: commandLineUser() },
        });
      } finally {
        await runtime.close();
      }
      if (flags.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        process.stdout.write(
          `${result.dismissed} failure(s) dismissed: no longer open (\`failures\`, \`status\`), kept in the history with the reason.\n`,
        );
        if (result.notOpen.length > 0)
          process.stdout.write(
            `Not open (resolved or dismissed already, another source's, or unknown): ${result.notOpen.map((id) => `#${id}`).join(', ')}.\n`,
          );
      }
      if (result.dismissed === 0 && wanted.length > 0)
        throw new CliError('no failure was dismissed: none of these ids is open', EXIT_CANNOT_RUN);
    });
  return command;
}

interface DismissFlags {
  reason?: string;
  source?: string;
  all?: boolean;
  json?: boolean;
}

/** The dashboard's bound on a dismissal's reason. */
const MAX_REASON = 500;

/**
 * Dismisses open failures through the repository the dashboard's action uses
 * (`FailuresRepository.dismiss`, one call per source): the ones named by id (of `sourceId` when
 * given), or every open one (of `sourceId`, else of every source) when no ids are given.
 */
export async function dismissFailures(
  failures: Pick<FailuresRepository, 'open' | 'dismiss'>,
  request: {
    ids: readonly string[] | undefined;
    sourceId: string | undefined;
    dismissal: { reason: string; by: string };
  },
): Promise<{ dismissed: number; ids: string[]; notOpen: string[] }> {
  const open = await failures.open({
    sourceId: request.sourceId,
    ...(request.ids ? { ids: request.ids } : {}),
  });
  const bySource = new Map<string, string[]>();
  for (const f of open) bySource.set(f.sourceId, [...(bySource.get(f.sourceId) ?? []), f.id]);
  let dismissed = 0;
  for (const [sourceId, ids] of bySource)
    dismissed += await failures.dismiss(sourceId, ids, request.dismissal);
  const ids = open.map((f) => f.id);
  const notOpen = (request.ids ?? []).filter((id) => !ids.includes(id));
  return { dismissed, ids, notOpen };
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
