import { Command } from 'commander';
import { ReceivablesError } from '../api/errors.js';
import { HttpTrace } from '../api/http-trace.js';
import { emptyLimiterStats } from '../api/rate-limit/types.js';
import { checkAccess, openSyncRuntime, type SyncRuntime, syncServiceOf } from '../app/runtime.js';
import { apiConnections, connectionIdOf, connectionOf } from '../config/connections.js';
import { type LoadedConfig, requireSources } from '../config/load.js';
import { AppError, errorCodeOf, messageOf } from '../domain/errors.js';
import { PausedSources } from '../state/paused-sources.js';
import { RUN_SHUT_DOWN } from '../state/runs.js';
import type { SourceSummary } from '../sync/run-sync.js';
import { loadCliConfig, outputStyle } from './cli-config.js';
import { CliError, EXIT_CANNOT_RUN, EXIT_OK, EXIT_ROWS_FAILED } from './errors.js';
import { faultLine } from './fault-line.js';
import { invocation } from './invocation.js';
import { ProgressLine } from './progress.js';
import { hasFailures, jsonSummary, textSummary } from './sync-summary.js';
import { LAST_WORDS_MS, shutdownSignals } from './worker-command.js';

interface SyncFlags {
  once?: boolean;
  source?: string;
  dryRun?: boolean;
  json?: boolean;
  traceHttp?: string;
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
    .option(
      '--trace-http <file>',
      'write every HTTP request and response of the pass to FILE as HAR 1.2 (credentials and tokens redacted)',
    )
    .addHelpText(
      'after',
      '\nExit codes: 0 every row synced or unchanged; 2 the pass finished but some rows failed (listed); 1 it could not run' +
        ' (a paused source is not synced: exit 1 naming it and why; `resume --source ID`, or its page on the dashboard, resumes it).' +
        '\nOn SIGTERM/SIGINT the pass in progress gets queue.shutdownSeconds to finish and no other source starts (exit 1' +
        ' when one was skipped); past the limit, or on a second signal, it is cut short: its run is marked interrupted, exit 1.',
    )
    .action(async (flags: SyncFlags, command: Command) => {
      const json = { written: false, started: Date.now() };
      try {
        await syncOnce(flags, command, json);
      } catch (error) {
        // --json promises a last stdout line: one that could not even start says why, counts at 0.
        if (flags.json && !json.written)
          process.stdout.write(
            `${JSON.stringify({ ...jsonSummary([], { requests: 0, rateLimited: 0 }, Date.now() - json.started), error: errorJson(error) })}\n`,
          );
        throw error;
      }
    });
}

/** The `error` member of the `--json` line of a run that could not run (or not to its end). */
function errorJson(error: unknown): { code: string; message: string } {
  return { code: errorCodeOf(error) ?? 'ERROR', message: messageOf(error) };
}

async function syncOnce(
  flags: SyncFlags,
  command: Command,
  json: { written: boolean; started: number },
): Promise<void> {
  if (!flags.once) throw new CliError('`sync` needs --once (the scheduled, long-running mode is `worker`)');
  const loaded = loadCliConfig(command);
  const sources = requireSources(loaded).filter((s) => !flags.source || s.id === flags.source);
  if (sources.length === 0) throw new CliError(`no source "${flags.source}" in the configuration`);
  const started = Date.now();
  const trace = flags.traceHttp ? new HttpTrace() : undefined;
  const saveTrace = () => (trace && flags.traceHttp ? writeTrace(trace, flags.traceHttp) : Promise.resolve());
  // Drawn from the start: an API that does not answer is retried (20 s and more) while the runtime
  // opens, before any file is read.
  let opened: SyncRuntime | undefined;
  const progress = new ProgressLine({
    stream: process.stderr,
    limiter: () => opened?.limiter.stats() ?? emptyLimiterStats(),
    requests: () => opened?.targets.stats().requests.requests ?? 0,
  });
  const runtime = await openSyncRuntime(loaded, undefined, {
    fetch: trace?.fetch(),
    onRetry: progress.onRetry,
  }).catch(async (error: unknown) => {
    progress.finish();
    await saveTrace();
    throw error;
  });
  opened = runtime;
  const summaries: SourceSummary[] = [];
  let stopped: unknown = null;
  // A paused source (by a user, or automatically after failed runs) is not synced here either.
  const pauses = await new PausedSources(runtime.database.db).list().catch(() => new Map());
  const paused = sources.filter((s) => pauses.has(s.id));
  const shutdown = onShutdown(runtime, loaded.config.queue.shutdownSeconds * 1000, progress);
  const skipped: string[] = [];
  const down: Array<{ connectionId: string; error: unknown }> = [];
  // Sources whose organization could not be settled (none named and several visible, or one the
  // token does not see): their own setting, so the other sources of their connection still sync.
  const refused: Array<{ sourceId: string; error: unknown }> = [];
  try {
    const service = syncServiceOf(runtime, loaded.config.sources, progress.onEvent);
    for (const config of sources) {
      if (pauses.has(config.id)) continue;
      if (shutdown.signal) {
        skipped.push(config.id);
        continue;
      }
      // A connection that failed (its API, its credentials) stops its own sources only: the
      // sources of the other connections still sync; the run exits 1 naming it.
      const connectionId = connectionIdOf(config);
      if (down.some((d) => d.connectionId === connectionId)) continue;
      try {
        summaries.push(
          ...(await service.syncSource(config.id, {
            trigger: 'once',
            dryRun: flags.dryRun ?? false,
            // A stopped pass is reported too (its counts as its run recorded them).
            onStopped: (partial) => summaries.push(partial),
          })),
        );
      } catch (error) {
        if (!isConnectionFault(error)) throw error;
        if (isOrganizationFault(error)) refused.push({ sourceId: config.id, error });
        else down.push({ connectionId, error });
      }
    }
    // A pass that read nothing sent nothing: one read checks that the API and the token answer
    // (an unchanged re-run, which read its rows, still costs no call).
    const reached = sources.filter(
      (s) =>
        !down.some((d) => d.connectionId === connectionIdOf(s)) && !refused.some((r) => r.sourceId === s.id),
    );
    if (!shutdown.signal && !readAnything(summaries) && reached.length > 0)
      await checkAccess(runtime, reached);
    if (down.length > 0) stopped = down[0]!.error;
    else if (refused.length > 0) stopped = refused[0]!.error;
  } catch (error) {
    // The pass stopped (the API, the credentials, the state DB): what was done is still reported,
    // the stopped pass's too (`onStopped` above).
    stopped = error;
  } finally {
    // No pass runs any more: a signal from now on ends the process as it would have before.
    shutdown.dispose();
    progress.finish();
    await runtime.close();
  }
  await saveTrace();
  const stats = runtime.targets.stats().requests;
  const summary = jsonSummary(
    summaries,
    { requests: stats.requests, rateLimited: stats.rateLimited },
    Date.now() - started,
  );
  // With --json the readable report goes to stderr, uncoloured (nothing of --json's output is).
  const report = textSummary(
    summaries,
    summary,
    flags.dryRun ?? false,
    outputStyle(command, process.stdout, { loaded, json: flags.json }),
  );
  // With --json, stdout carries only the JSON line; the readable report goes to stderr.
  if (flags.json) process.stderr.write(report);
  else process.stdout.write(report);
  if (flags.json) {
    const line = stopped ? { ...summary, error: errorJson(stopped) } : summary;
    process.stdout.write(`${JSON.stringify(line)}\n`);
    json.written = true;
  }
  if (stopped)
    throw new CliError(stoppedLine(loaded, stopped, down, refused, sources.length), EXIT_CANNOT_RUN, {
      code: 'CLI_SOURCES_NOT_SYNCED',
    });
  if (paused.length > 0)
    throw new CliError(
      `not synced, paused: ${paused
        .map((s) => `${s.id} (${pauses.get(s.id)?.reason ?? 'paused by a user'})`)
        .join(
          '; ',
        )}. Once the cause is fixed, resume it: ${paused.map((s) => `\`${invocation()} resume --source ${s.id}\``).join(', ')} (or on its page of the dashboard).`,
      EXIT_CANNOT_RUN,
      { code: 'CLI_SOURCES_PAUSED' },
    );
  if (skipped.length > 0)
    throw new CliError(
      `stopped by ${shutdown.signal} before syncing: ${skipped.join(', ')}`,
      EXIT_CANNOT_RUN,
      { code: 'CLI_SOURCES_NOT_SYNCED' },
    );
  process.exitCode = hasFailures(summaries) ? EXIT_ROWS_FAILED : EXIT_OK;
}

/**
 * A fault of one connection's API or credentials: the sources of the other connections can still
 * sync. Said by the error itself: the API client's errors (`ReceivablesError`: the API, the network,
 * the token and its storage), an answer's status, a missing login, or the source's organization. The
 * state DB's and Redis's errors are none of these (`StateDbError`, `RedisUnavailableError`): they
 * stop every source.
 */
function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof AppError)) return false;
  if (isOrganizationFault(error)) return true;
  return error instanceof ReceivablesError || error.code === 'LOGIN_REQUIRED' || error.status !== undefined;
}

/** A source's organization could not be settled: its own setting, not its connection's health. */
const isOrganizationFault = (error: unknown): boolean =>
  error instanceof AppError &&
  (error.code === 'ORGANIZATION_NOT_VISIBLE' || error.code === 'ORGANIZATION_UNKNOWN');

/**
 * The one line of a stopped run: the fault, and with several connections or sources, which ones
 * it stopped (a connection's outage stops its sources; an organization stops its source only).
 */
function stoppedLine(
  loaded: LoadedConfig,
  stopped: unknown,
  down: ReadonlyArray<{ connectionId: string; error: unknown }>,
  refused: ReadonlyArray<{ sourceId: string; error: unknown }>,
  sourceCount: number,
): string {
  const source = refused.find((r) => r.error === stopped);
  if (source) {
    const line = faultLine(stopped, loaded.config.api.baseUrl);
    if (sourceCount === 1) return line;
    const others = refused.filter((r) => r !== source).map((r) => `${r.sourceId} (${errorCodeOf(r.error)})`);
    const also = others.length > 0 ? `; also not synced: ${others.join(', ')}` : '';
    const rest = sourceCount > refused.length ? '; the other sources were synced' : '';
    return `source ${source.sourceId}: ${line}${also}${rest}`;
  }
  const first = down.find((d) => d.error === stopped);
  const connection = first ? connectionOf(loaded, first.connectionId) : undefined;
  const line = faultLine(stopped, connection?.api.baseUrl ?? loaded.config.api.baseUrl);
  if (!first || apiConnections(loaded).size === 1) return line;
  const others = down.filter((d) => d !== first).map((d) => `${d.connectionId} (${errorCodeOf(d.error)})`);
  const notSynced = refused.map((r) => `${r.sourceId} (${errorCodeOf(r.error)})`);
  return `connection ${first.connectionId}: ${line}${others.length > 0 ? `; also stopped: ${others.join(', ')}` : ''}${notSynced.length > 0 ? `; not synced: ${notSynced.join(', ')}` : ''}; the other connections' sources were synced`;
}

/**
 * SIGTERM and SIGINT during `sync --once`: the pass in progress may finish within `graceMs` (no
 * other source starts); past it, or on a second signal, the pass is cut short: its run is closed as
 * `interrupted` (`shut down`) and the process exits 1 at once, leaving the state DB open under the
 * pass (closing it would fail the pass half-way). What the pass left (a claimed file, a write in
 * flight) is taken over by the next pass, as after a crash.
 */
function onShutdown(
  runtime: Awaited<ReturnType<typeof openSyncRuntime>>,
  graceMs: number,
  progress: ProgressLine,
): { readonly signal: NodeJS.Signals | null; dispose(): void } {
  const signals = shutdownSignals();
  let signal: NodeJS.Signals | null = null;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const cut = async (why: string) => {
    if (disposed) return;
    disposed = true;
    progress.finish();
    let ids: string[] = [];
    let limit: NodeJS.Timeout | undefined;
    await Promise.race([
      runtime.repos.runs.interruptInProgress(RUN_SHUT_DOWN).then(
        (interrupted) => {
          ids = interrupted;
        },
        () => undefined,
      ),
      new Promise((resolve) => {
        limit = setTimeout(resolve, LAST_WORDS_MS);
      }),
    ]);
    clearTimeout(limit);
    const runs = ids.length > 0 ? `; run ${ids.map((id) => `#${id}`).join(', ')} marked interrupted` : '';
    process.stderr.write(`${why}: the pass in progress was cut short${runs}; the next pass takes it over.\n`);
    process.exit(EXIT_CANNOT_RUN);
  };
  void signals.first.then((first) => {
    if (disposed) return;
    signal = first;
    process.stderr.write(
      `\n${first}: finishing the pass in progress (at most ${graceMs / 1000} s; signal again to stop at once)\n`,
    );
    timer = setTimeout(() => void cut(`${first}: not finished within ${graceMs / 1000} s`), graceMs);
    timer.unref();
  });
  void signals.second.then((second) => cut(`${second} again`));
  return {
    get signal() {
      return signal;
    },
    dispose() {
      disposed = true;
      clearTimeout(timer);
      signals.dispose();
    },
  };
}

/** Saves a `--trace-http` file and says where, on stderr. */
export async function writeTrace(trace: HttpTrace, file: string): Promise<void> {
  await trace.save(file);
  process.stderr.write(
    `HTTP trace: ${trace.size} request(s) in ${file} (HAR 1.2; credentials and tokens redacted)\n`,
  );
}
