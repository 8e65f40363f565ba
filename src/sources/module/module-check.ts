import type { SourceConfig } from '../../config/schema.js';
import { createLogger } from '../../logging/logger.js';
import { checkOk, type SourceCheckContext, type SourceCheckResult } from '../source-description.js';
import { loadModuleSource } from './module-loader.js';

/**
 * `doctor`'s check of a module source: the module loads and builds its source (with a silent
 * logger and cursors that keep nothing). A module that does not load throws, naming what is wrong.
 */
export async function moduleLoadCheck(
  source: Extract<SourceConfig, { type: 'module' }>,
  context: SourceCheckContext,
): Promise<SourceCheckResult> {
  await loadModuleSource({
    sourceId: source.id,
    specifier: source.module,
    baseDir: context.baseDir,
    options: source.options ?? {},
    context: {
      sourceId: source.id,
      logger: createLogger({ level: 'silent' }),
      clock: { now: () => new Date() },
      env: context.env,
      moduleDir: context.baseDir,
      cursors: { get: async () => null, set: async () => {} },
    },
  });
  return checkOk(`module ${source.module} loads`);
}
