import type { Command } from 'commander';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { type TerminalStyle, terminalStyle } from '../logging/terminal-style.js';

/** The options of the program itself, valid before any command. */
export interface GlobalFlags {
  config?: string;
  logFormat?: Config['log']['format'];
  /** false with `--no-color` (commander's negated option; true otherwise). */
  color?: boolean;
}

/** The configuration a command runs with: `--config` (or the usual places), then `--log-format` over it. */
export function loadCliConfig(command: Command): LoadedConfig {
  const globals = command.optsWithGlobals<GlobalFlags>();
  return withGlobalFlags(loadConfig({ file: globals.config }), globals);
}

/** `--log-format` wins over `LOG_FORMAT` and `log.format`; `--no-color` over `log.color`. */
export function withGlobalFlags(loaded: LoadedConfig, globals: GlobalFlags): LoadedConfig {
  if (!globals.logFormat && globals.color !== false) return loaded;
  const log = {
    ...loaded.config.log,
    ...(globals.logFormat ? { format: globals.logFormat } : {}),
    ...(globals.color === false ? { color: false } : {}),
  };
  return { ...loaded, config: { ...loaded.config, log } };
}

/**
 * The style of a command's human output on `stream`: colours on a terminal, unless `--no-color`
 * or `log.color: false` say no (`loaded`, when the command read its configuration), or the output
 * is `--json`'s.
 */
export function outputStyle(
  command: Command,
  stream: NodeJS.WritableStream,
  options: { loaded?: LoadedConfig; json?: boolean | undefined } = {},
): TerminalStyle {
  const enabled =
    command.optsWithGlobals<GlobalFlags>().color !== false &&
    options.loaded?.config.log.color !== false &&
    !options.json;
  return terminalStyle(stream, enabled);
}
