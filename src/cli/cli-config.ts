import type { Command } from 'commander';
import { type LoadedConfig, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';

/** The options of the program itself, valid before any command. */
export interface GlobalFlags {
  config?: string;
  logFormat?: Config['log']['format'];
}

/** The configuration a command runs with: `--config` (or the usual places), then `--log-format` over it. */
export function loadCliConfig(command: Command): LoadedConfig {
  const globals = command.optsWithGlobals<GlobalFlags>();
  return withGlobalFlags(loadConfig({ file: globals.config }), globals);
}

/** `--log-format` wins over `LOG_FORMAT` and `log.format`. */
export function withGlobalFlags(loaded: LoadedConfig, globals: GlobalFlags): LoadedConfig {
  if (!globals.logFormat) return loaded;
  return {
    ...loaded,
    config: { ...loaded.config, log: { ...loaded.config.log, format: globals.logFormat } },
  };
}
