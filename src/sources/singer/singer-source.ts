import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  type SingerSettings,
  type SingerSettingsInput,
  singerSettingsSchema,
} from '../../config/singer-source-schema.js';
import type { Logger } from '../../logging/logger.js';
import type { CursorStore } from '../ports.js';
import type { Source, SourceNotices, SourceUnit } from '../source.js';
import { AirbyteReader, configuredCatalog } from './airbyte-protocol.js';
import { selectStreams } from './catalog.js';
import { SingerSourceError } from './errors.js';
import { type MessageInput, type SingerRunStats, SingerUnit } from './singer-unit.js';
import { readLines, TapProcess, tapOutput } from './tap-process.js';

/** The cursor's stream name: a Singer source keeps one cursor, the tap's whole STATE. */
export const SINGER_STATE_STREAM = 'state';

/** The `sources[]` entry of a Singer source. */
export type SingerSourceConfigInput = SingerSettingsInput & {
  id: string;
  /** The folder the tap runs in (the configuration file's when loaded from one). */
  cwd?: string | undefined;
};

/** Messages given to the source instead of a tap's: the target's stdin. */
export interface SingerInput {
  stream: Readable;
  /** A STATE reached (every record before it synced or recorded as a failure): the target echoes it. */
  onState(value: unknown): Promise<void>;
}

export interface SingerSourceProps {
  config: SingerSourceConfigInput;
  cursors: CursorStore;
  logger: Logger;
  /** A folder of the daemon's own where each run's `--state` and catalog files are written (and removed). */
  workDir: string;
  /** The target's input: read instead of running `command`. */
  input?: SingerInput;
}

export interface SingerSource extends Source {
  readonly type: 'singer';
  readonly settings: SingerSettings;
  /** What the latest run read (null before any). */
  lastRun(): SingerRunStats | null;
}

/**
 * A Singer tap as a source (docs/sources-singer.md): each pass runs `command` with its `--config`,
 * the STATE stored by the last complete pass (`--state`) and a catalog (the configured one, or the
 * tap's `--discover` with the configured streams selected), and reads its messages as one unit.
 * Fed by `receivables-sync target` instead, it reads the messages on the target's stdin.
 *
 * @example
 *   const source = createSingerSource({ config, cursors, logger, workDir: 'data/singer' });
 *   for await (const unit of source.units()) {
 *     for await (const batch of unit.batches()) await sync(batch), await unit.failed?.([]);
 *     await unit.complete({ failures: [] }); // the tap's last STATE is stored only now
 *   }
 */
export function createSingerSource(props: SingerSourceProps): SingerSource {
  const { config, cursors } = props;
  const settings = singerSettingsSchema.parse(config);
  const log = props.logger.child({ source: config.id });
  const cwd = config.cwd ?? process.cwd();
  let last: SingerUnit | null = null;
  const warnings: Array<{ unit: string; warning: string }> = [];

  const storeState = (value: unknown) => cursors.set(config.id, SINGER_STATE_STREAM, { state: value });
  const unitOf = (input: MessageInput, onState?: (value: unknown) => Promise<void>) => {
    last = new SingerUnit({
      sourceId: config.id,
      settings,
      input,
      storeState,
      logger: log,
      ...(onState ? { onState } : {}),
    });
    return last;
  };

  async function* units(): AsyncGenerator<SourceUnit> {
    warnings.length = 0;
    if (props.input) {
      const { stream, onState } = props.input;
      yield unitOf(
        { lines: readLines(stream), finished: async () => {}, stop: async () => {}, label: 'input' },
        onState,
      );
      return;
    }
    if (!settings.command) {
      warnings.push({
        unit: config.id,
        warning: `no command: this source is fed by \`receivables-sync target --source ${config.id}\` (a tap's output on its stdin); a pass has nothing to run`,
      });
      return;
    }
    await mkdir(props.workDir, { recursive: true, mode: 0o700 });
    const runDir = await mkdtemp(join(props.workDir, `${config.id}-`));
    try {
      const airbyte = settings.protocol === 'airbyte';
      const stored = await cursors.get(config.id, SINGER_STATE_STREAM);
      const state = stored && stored.state !== undefined && stored.state !== null ? stored.state : null;
      const catalog = await catalogFile(runDir);
      // Singer: tap --config c --state s --catalog k; Airbyte: source read --config c --catalog k --state s.
      const args = [...settings.command, ...(airbyte ? ['read'] : [])];
      if (settings.config) args.push('--config', settings.config);
      args.push(airbyte ? '--catalog' : settings.catalogFlag, catalog.file);
      if (state !== null) {
        const stateFile = join(runDir, 'state.json');
        await writeFile(stateFile, JSON.stringify(state), { mode: 0o600, flag: 'wx' });
        args.push('--state', stateFile);
      }
      log.info(
        { argv: args.map((a) => (a.startsWith(runDir) ? a.slice(runDir.length + 1) : a)) },
        'running the tap',
      );
      const tap = new TapProcess({ argv: args, cwd, timeoutSeconds: settings.timeoutSeconds, logger: log });
      const reader = airbyte ? new AirbyteReader(catalog.content, state, log) : null;
      try {
        yield unitOf({
          lines: tap.lines(),
          // A failed Airbyte source says why in its own messages (TRACE, ERROR logs), not on stderr.
          finished: () =>
            tap.finished().catch((error: unknown) => {
              if (reader?.lastError && error instanceof SingerSourceError)
                throw new SingerSourceError(error.code, `${error.message}; it reported: ${reader.lastError}`);
              throw error;
            }),
          stop: () => tap.stop(),
          label: 'tap',
          ...(reader ? { read: reader.read, schemaOf: (stream: string) => reader.schemaOf(stream) } : {}),
        });
      } finally {
        await tap.stop();
      }
    } finally {
      await rm(runDir, { recursive: true, force: true });
    }
  }

  /**
   * The configured catalog, or the tap's discovery with the configured streams selected, as a file
   * (and its content, for the Airbyte protocol's schemas).
   */
  async function catalogFile(runDir: string): Promise<{ file: string; content: unknown }> {
    const airbyte = settings.protocol === 'airbyte';
    if (settings.catalog) {
      const content = airbyte ? JSON.parse(await readFile(settings.catalog, 'utf8')) : null;
      return { file: settings.catalog, content };
    }
    const config = settings.config ? ['--config', settings.config] : [];
    const args = airbyte
      ? [...settings.command!, 'discover', ...config]
      : [...settings.command!, ...config, '--discover'];
    const output = await tapOutput({ argv: args, cwd, timeoutSeconds: settings.timeoutSeconds, logger: log });
    const names = Object.keys(settings.streams);
    const content = airbyte ? configuredCatalog(output, names) : selectStreams(output, names);
    const file = join(runDir, 'catalog.json');
    await writeFile(file, JSON.stringify(content), { mode: 0o600, flag: 'wx' });
    return { file, content };
  }

  return {
    id: config.id,
    type: 'singer',
    settings,
    units,
    lastRun: () => (last as SingerUnit | null)?.stats ?? null,
    notices: (): SourceNotices => ({ refused: [], warnings: [...warnings] }),
  };
}
