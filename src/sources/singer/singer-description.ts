import { access, constants } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { SourceConfig } from '../../config/schema.js';
import type { SingerColumnSetting } from '../../config/singer-source-schema.js';
import { messageOf } from '../../domain/errors.js';
import { createLogger } from '../../logging/logger.js';
import {
  checkFailed,
  checkOk,
  type SettingPiece,
  type SourceCheckResult,
  type SourceDescription,
} from '../source-description.js';
import { configuredCatalog } from './airbyte-protocol.js';
import { selectStreams } from './catalog.js';
import { tapOutput } from './tap-process.js';

type SingerSourceConfig = Extract<SourceConfig, { type: 'singer' }>;

/** A Singer source: one cursor (the tap's STATE), its tap and streams shown on the dashboard. */
export function singerDescription(config: SingerSourceConfig): SourceDescription {
  const streams = Object.entries(config.streams);
  return {
    noCursors: { status: 'none yet (the tap has written no STATE)', page: 'none yet' },
    // Its one cursor, `state`, is listed once the tap wrote one.
    configuredStreams: [],
    dropDir: null,
    columnMapping: {},
    settings: [
      {
        label: 'Tap',
        value: config.command
          ? [
              { code: config.command.join(' ') },
              ...(config.config ? [{ text: ' with ' }, { code: config.config }] : []),
            ]
          : [{ text: 'fed by ' }, { code: `receivables-sync target --source ${config.id}` }],
      },
      {
        label: 'Streams',
        value: streams.map(
          ([name, s]): SettingPiece => ({
            fold: {
              summary: [{ code: name }, { text: ' as ' }, { code: s.kind }],
              body: Object.entries(s.columns)
                .map(([column, setting]) => `${column}: ${settingWords(setting)}`)
                .join('\n'),
            },
          }),
        ),
      },
    ],
    check: (context) => singerCheck(config, context.env),
    // A tap run that could not be read keeps the cursor: the next pass runs the tap again.
    unreadUnit: () => null,
  };
}

function settingWords(setting: SingerColumnSetting): string {
  if (typeof setting === 'string') return setting;
  if (Array.isArray(setting)) return setting.join(' + ');
  if ('value' in setting) return `"${setting.value}"`;
  if ('first' in setting)
    return `first of ${setting.first.map((e) => (Array.isArray(e) ? e.join(' + ') : e)).join(', ')}${setting.otherwise !== undefined ? `, else "${setting.otherwise}"` : ''}`;
  return `${setting.path} mapped`;
}

/**
 * `doctor`: the tap's program is found and its files are readable; without a catalog, the tap's
 * `--discover` runs and must list every configured stream (it reads, as discovery does, and writes
 * nothing of ours).
 */
async function singerCheck(
  config: SingerSourceConfig,
  env: Readonly<Record<string, string | undefined>>,
): Promise<SourceCheckResult> {
  if (!config.command)
    return checkOk(`fed by \`receivables-sync target --source ${config.id}\`: no tap to run`);
  const cwd = config.cwd ?? process.cwd();
  const program = config.command[0]!;
  if (!(await findProgram(program, cwd, env.PATH ?? '')))
    return checkFailed(
      `the tap's program "${program}" is not found (not on PATH, nor under ${cwd}); install the tap or give its path in command`,
    );
  for (const [key, file] of [
    ['config', config.config],
    ['catalog', config.catalog],
  ] as const) {
    if (file === undefined) continue;
    try {
      await access(file, constants.R_OK);
    } catch (error) {
      return checkFailed(
        `${key} ${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? messageOf(error)}`,
      );
    }
  }
  const names = Object.keys(config.streams);
  if (config.catalog)
    return checkOk(`tap ${program}, catalog ${config.catalog}, streams ${names.join(', ')}`);
  try {
    const airbyte = config.protocol === 'airbyte';
    const withConfig = config.config ? ['--config', config.config] : [];
    const output = await tapOutput({
      argv: airbyte
        ? [...config.command, 'discover', ...withConfig]
        : [...config.command, ...withConfig, '--discover'],
      cwd,
      timeoutSeconds: config.timeoutSeconds,
      logger: createLogger({ level: 'silent' }),
    });
    if (airbyte) configuredCatalog(output, names);
    else selectStreams(output, names);
  } catch (error) {
    return checkFailed(`${config.protocol === 'airbyte' ? 'discover' : '--discover'}: ${messageOf(error)}`);
  }
  return checkOk(
    `tap ${program}: ${config.protocol === 'airbyte' ? 'discover' : '--discover'} lists ${names.join(', ')}`,
  );
}

async function findProgram(program: string, cwd: string, path: string): Promise<boolean> {
  const candidates =
    program.includes('/') || isAbsolute(program)
      ? [resolve(cwd, program)]
      : path.split(delimiter).map((dir) => join(dir, program));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      return true;
    } catch {}
  }
  return false;
}
