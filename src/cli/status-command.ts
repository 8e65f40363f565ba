import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { type StatusProfiles, statusProfiles } from '../app/source-profiles.js';
import { openStateRuntime } from '../app/state-runtime.js';
import { apiConnections, connectionIdOf, connectionOf } from '../config/connections.js';
import { CONFIG_FILE_NAME, type LoadedConfig, noSourceMessage } from '../config/load.js';
import type { SourceConfig } from '../config/schema.js';
import { namedOrganization, type OrganizationConnection } from '../config/source-organization.js';
import { STREAM_ORDER, type Stream } from '../domain/records.js';
import { ignoredFilesOf, type RunRejectedFile, rejectedFilesOf } from '../domain/sync-state.js';
import { printable } from '../logging/printable-text.js';
import { PLAIN, type TerminalStyle, type Tone } from '../logging/terminal-style.js';
import type { CursorValue, StreamCursor } from '../state/cursors.js';
import { PausedSources, type SourcePause } from '../state/paused-sources.js';
import type { RunRow } from '../state/runs.js';
import { loadCliConfig, outputStyle } from './cli-config.js';
import { DEMO_DIR } from './demo-command.js';
import { CliError } from './errors.js';
import { invocation } from './invocation.js';

/** What `status` shows of one configured source; the dashboard can show the same. */
export interface SourceStatus {
  id: string;
  type: SourceConfig['type'];
  schedule: string | null;
  /** The connection it syncs through (`default` without `connections:`). */
  connection: string;
  /** The organization it syncs into as configured (its own, else its connection's); null: the one its token sees. */
  organizationId: string | null;
  /** Streams with a cursor row, and the streams it is configured with (a SQL source's queries). */
  streams: Array<{ stream: string; cursor: CursorValue | null; updatedAt: Date | null }>;
  /** Why it is paused, by whom and since when (`pause` / `resume`, the dashboard); null when it is not. */
  paused: SourcePause | null;
  lastRun:
    | (Pick<RunRow, 'id' | 'trigger' | 'status' | 'counts' | 'error' | 'startedAt' | 'finishedAt'> & {
        /** The files it could not read (set aside in the drop folder's `rejected/`), with why. */
        rejectedFiles: RunRejectedFile[];
        /** Files of the drop folder the run left: their names match no kind (`files:`). */
        ignoredFiles: string[];
      })
    | null;
  openFailures: number;
}

export interface StatusReaders {
  cursors: { list(sourceId?: string): Promise<StreamCursor[]> };
  runs: { recent(sourceId?: string, limit?: number): Promise<RunRow[]> };
  openFailures(sourceId: string): Promise<number>;
  /** The paused sources, with why (`PausedSources.list`); none when not given. */
  pauses?(): Promise<ReadonlyMap<string, SourcePause>>;
}

/** The status of each source, from the state DB. */
export async function collectStatus(
  readers: StatusReaders,
  sources: readonly SourceConfig[],
  /** What each source's type shows (`statusProfiles`): the streams it is configured with. */
  profileOf: StatusProfiles,
  /** The configured connection of that id (what names the organization of its sources that name none). */
  configuredConnection: (connectionId: string) => Pick<OrganizationConnection, 'api'> | undefined = () =>
    undefined,
): Promise<SourceStatus[]> {
  const out: SourceStatus[] = [];
  const pauses = (await readers.pauses?.()) ?? new Map<string, SourcePause>();
  for (const source of sources) {
    const cursors = await readers.cursors.list(source.id);
    const configured = profileOf(source.id).configuredStreams;
    const names = [...new Set([...configured, ...cursors.map((c) => c.stream)])].sort(byStreamOrder);
    const [run] = await readers.runs.recent(source.id, 1);
    const connection = connectionIdOf(source);
    out.push({
      id: source.id,
      type: source.type,
      schedule: source.schedule ?? null,
      connection,
      organizationId: namedOrganization(source, configuredConnection(connection))?.id ?? null,
      paused: pauses.get(source.id) ?? null,
      streams: names.map((stream) => {
        const row = cursors.find((c) => c.stream === stream);
        return { stream, cursor: row?.cursor ?? null, updatedAt: row?.updatedAt ?? null };
      }),
      lastRun: run
        ? {
            id: run.id,
            trigger: run.trigger,
            status: run.status,
            counts: run.counts,
            error: run.error,
            startedAt: run.startedAt,
            finishedAt: run.finishedAt,
            rejectedFiles: rejectedFilesOf(run.counts),
            ignoredFiles: ignoredFilesOf(run.counts),
          }
        : null,
      openFailures: await readers.openFailures(source.id),
    });
  }
  return out;
}

const byStreamOrder = (a: string, b: string): number => rank(a) - rank(b) || a.localeCompare(b);
const rank = (stream: string): number => {
  const i = STREAM_ORDER.indexOf(stream as Stream);
  return i === -1 ? STREAM_ORDER.length : i;
};

/** A cursor in one line: `updated_at=2026-01-15 09:30:00+00 id=42` for a keyset, else its JSON. */
export function describeCursor(cursor: CursorValue | null): string {
  if (cursor === null) return '(none: the next pass reads the stream from its start)';
  const { kind, columns, values } = cursor as { kind?: unknown; columns?: unknown; values?: unknown };
  if (kind === 'keyset' && Array.isArray(columns) && Array.isArray(values)) {
    return columns.map((c, i) => `${String(c)}=${String(values[i])}`).join(' ');
  }
  return JSON.stringify(cursor);
}

const KINDS = ['accounts', 'invoices', 'creditNotes'] as const;

function describeRun(run: NonNullable<SourceStatus['lastRun']>): string {
  const took = run.finishedAt
    ? ` in ${((run.finishedAt.getTime() - run.startedAt.getTime()) / 1000).toFixed(1)} s`
    : ' (running)';
  const counts = KINDS.flatMap((kind) => {
    const c = run.counts[kind] as Record<string, number> | undefined;
    if (!c) return [];
    return [`${kind} ${c.created ?? 0}/${c.updated ?? 0}/${c.unchanged ?? 0}/${c.failed ?? 0}`];
  });
  const error = run.error ? `; error: ${run.error}` : '';
  return (
    `#${run.id} ${run.status} (${run.trigger}), started ${run.startedAt.toISOString()}${took}` +
    (counts.length > 0 ? `; created/updated/unchanged/failed: ${counts.join(', ')}` : '') +
    error
  );
}

/** Where the demo leaves its configuration (`demo`'s default folder), relative to the working folder. */
const DEMO_CONFIG = join(DEMO_DIR, CONFIG_FILE_NAME);

/** `status` without a source: why, how to configure one, and the demo's configuration if it ran here. */
function noSourceReport(loaded: LoadedConfig): string {
  const message = noSourceMessage(loaded);
  const demo = existsSync(DEMO_CONFIG)
    ? `The demo keeps its own configuration: ${invocation()} --config ${DEMO_CONFIG} status\n`
    : '';
  return `${message.charAt(0).toUpperCase()}${message.slice(1)}.\n${demo}`;
}

/**
 * The human-readable report. `profileOf`: what each source's type shows (`statusProfiles`).
 * `scope`: each source's connection and organization are shown (when the configuration has
 * several connections, or names an organization).
 */
export function formatStatus(
  statuses: readonly SourceStatus[],
  profileOf: StatusProfiles,
  scope = false,
  /** Colours "paused" and open failures (a terminal's); default none. */
  style: TerminalStyle = PLAIN,
): string {
  const lines: string[] = [];
  // The word of a line to colour, once the line is escaped.
  const toned = new Map<number, { tone: Tone; word: string }>();
  const colour = (tone: Tone, word: string) => toned.set(lines.length - 1, { tone, word });
  for (const s of statuses) {
    lines.push(`${s.id} (${s.type}${s.schedule ? `, schedule "${s.schedule}"` : ''})`);
    if (s.paused) {
      // Each reason kept says who paused it: `paused by alice from the dashboard`, `paused automatically ...`.
      const why = s.paused.reason ?? (s.paused.by === 'auto' ? 'paused automatically' : 'paused by a user');
      const since = s.paused.at ? ` (since ${s.paused.at.toISOString()})` : '';
      lines.push(
        `  ${why.startsWith('paused') ? why : `paused: ${why}`}${since}; not synced until \`${invocation()} resume --source ${s.id}\``,
      );
      colour('warning', 'paused');
    }
    if (scope) {
      const organization = s.organizationId ?? '(the one its token sees)';
      lines.push(`  connection: ${s.connection}, organization: ${organization}`);
    }
    if (s.streams.length === 0) {
      lines.push(`  cursors: ${profileOf(s.id).noCursors}`);
    } else {
      lines.push('  cursors:');
      const width = Math.max(...s.streams.map((c) => c.stream.length));
      for (const c of s.streams) {
        const when = c.updatedAt
          ? `  [${c.cursor === null ? 'reset' : 'set'} ${c.updatedAt.toISOString()}]`
          : '';
        lines.push(`    ${c.stream.padEnd(width)}  ${describeCursor(c.cursor)}${when}`);
      }
    }
    lines.push(`  last run: ${s.lastRun ? describeRun(s.lastRun) : 'never'}`);
    const rejected = s.lastRun?.rejectedFiles ?? [];
    if (rejected.length > 0) {
      lines.push(
        `  files the last run could not read (set aside with their reason; fix each, or the configuration, and drop it again):`,
      );
      for (const file of rejected) lines.push(`    ${file.file}: ${file.reason}`);
    }
    const ignored = s.lastRun?.ignoredFiles ?? [];
    if (ignored.length > 0)
      lines.push(`  left in the drop folder, their names match no kind (files:): ${ignored.join(', ')}`);
    lines.push(
      `  open failures: ${s.openFailures}${s.openFailures > 0 ? ` (see \`failures --source ${s.id}\`)` : ''}`,
    );
    if (s.openFailures > 0) colour('error', 'open failures');
  }
  // A run's error can name a dropped file, a cursor holds source data: one escaped line each.
  return `${lines
    .map((line, i) => {
      const text = printable(line);
      const word = toned.get(i);
      return word ? text.replace(word.word, style.tone(word.tone, word.word)) : text;
    })
    .join('\n')}\n`;
}

/** `credit-notes` and `creditnotes` are accepted for `creditNotes`; `kept`: the source's own cursor names, for the error. */
export function parseStream(text: string, kept: readonly string[] = []): Stream {
  const normal = text.trim().toLowerCase().replace(/[-_ ]/g, '');
  const stream = STREAM_ORDER.find((s) => s.toLowerCase() === normal);
  const known = [...new Set([...STREAM_ORDER, ...kept])];
  if (!stream) throw new CliError(`unknown stream "${text}": one of ${known.join(', ')}`);
  return stream;
}

interface StatusFlags {
  source?: string;
  json?: boolean;
}

/**
 * `status [--source ID] [--json]`: per source its type, the cursor of each stream, the last run and
 * its counts, the open failures. `status reset-cursor --source ID --stream NAME` forgets one stream's
 * cursor (the next pass reads that stream from its start) and leaves the other streams as they are.
 */
export function statusCommand(): Command {
  const command = new Command('status')
    .description(
      'show each source: the cursor of each stream, the last run and its counts, the open failures',
    )
    .option('--source <id>', 'only this source')
    .option('--json', 'print one JSON object {"sources":[...]} on stdout')
    .action(async (flags: StatusFlags, cmd: Command) => {
      const loaded = loadCliConfig(cmd);
      if (loaded.config.sources.length === 0 && !flags.source) {
        // Nothing to report, and no state DB to make for it (an embedded one would be created).
        process.stdout.write(flags.json ? `${JSON.stringify({ sources: [] })}\n` : noSourceReport(loaded));
        return;
      }
      const sources = loaded.config.sources.filter((s) => !flags.source || s.id === flags.source);
      if (flags.source && sources.length === 0)
        throw new CliError(`no source "${flags.source}" in the configuration`);
      const profileOf = statusProfiles(sources);
      const runtime = await openStateRuntime(loaded);
      try {
        const statuses = await collectStatus(
          {
            cursors: runtime.repos.cursors,
            runs: runtime.repos.runs,
            openFailures: (id) => runtime.repos.failures.countOpen(id),
            pauses: () => new PausedSources(runtime.database.db).list(),
          },
          sources,
          profileOf,
          (id) => connectionOf(loaded, id),
        );
        const scope = apiConnections(loaded).size > 1 || statuses.some((s) => s.organizationId !== null);
        process.stdout.write(
          flags.json
            ? `${JSON.stringify({ sources: statuses })}\n`
            : formatStatus(statuses, profileOf, scope, outputStyle(cmd, process.stdout, { loaded })),
        );
      } finally {
        await runtime.close();
      }
    });

  command
    .command('reset-cursor')
    .description(
      "forget one stream's cursor: the next pass reads that stream from its start; the other streams keep theirs",
    )
    .option('--source <id>', 'the source (required)')
    .option(
      '--stream <name>',
      `the stream (required): ${STREAM_ORDER.join(', ')}, or a cursor the source keeps (a Singer source's: state)`,
    )
    .action(async (flags: { source?: string; stream?: string }, cmd: Command) => {
      // Commander hands `--source` to `status` itself when it follows the subcommand: read both.
      const sourceId = flags.source ?? (cmd.parent?.opts() as StatusFlags | undefined)?.source;
      if (!sourceId || !flags.stream) throw new CliError('reset-cursor needs --source ID and --stream NAME');
      const loaded = loadCliConfig(cmd);
      if (!loaded.config.sources.some((s) => s.id === sourceId)) {
        throw new CliError(`no source "${sourceId}" in the configuration`);
      }
      const runtime = await openStateRuntime(loaded);
      try {
        const { cursors } = runtime.repos;
        // A record kind, or the name of a cursor the source keeps (a Singer source's `state`).
        const kept = (await cursors.list(sourceId)).map((c) => c.stream);
        const stream = kept.includes(flags.stream.trim())
          ? flags.stream.trim()
          : parseStream(flags.stream, kept);
        const before = await cursors.get(sourceId, stream);
        const reset = await cursors.reset(sourceId, stream);
        process.stdout.write(
          reset.length === 0
            ? `${sourceId}/${stream} has no cursor: nothing to reset.\n`
            : `Cursor of ${sourceId}/${stream} reset (it was ${describeCursor(before)}); ` +
                'the next pass reads that stream from its start. The other streams keep their cursors.\n',
        );
      } finally {
        await runtime.close();
      }
    });
  return command;
}
