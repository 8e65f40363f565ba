import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ModuleSource, ModuleSourceContext, ModuleSourceFactory } from './contract.js';
import { ModuleSourceError } from './errors.js';
import { describe } from './record-check.js';

/** Imports a module by URL; a seam for tests. */
export type ImportModule = (href: string) => Promise<unknown>;
const importModule: ImportModule = (href) => import(href);

/** A path (`./sources/billing.js`, `/opt/x.mjs`, `billing.ts`) rather than a package name. */
const isPath = (specifier: string) =>
  specifier.startsWith('.') || isAbsolute(specifier) || /\.(c|m)?(j|t)s$/.test(specifier);

/**
 * Where a `module:` setting points: a path, relative to `baseDir` (the configuration file's folder),
 * or the name of a package installed next to it.
 */
export function resolveModule(specifier: string, baseDir: string): string {
  if (isPath(specifier)) return pathToFileURL(resolve(baseDir, specifier)).href;
  try {
    return pathToFileURL(createRequire(join(baseDir, 'noop.js')).resolve(specifier)).href;
  } catch {
    return specifier; // an ESM-only package: let import() resolve it
  }
}

/**
 * Loads the module and builds its source: the default export (or a named `createSource`) is either a
 * factory `(options, context) => source` (async allowed) or a source object itself. Every way this
 * can go wrong ends in a `ModuleSourceError` naming the module and what it should export.
 */
export async function loadModuleSource(props: {
  sourceId: string;
  specifier: string;
  baseDir: string;
  options: Record<string, unknown>;
  context: ModuleSourceContext;
  importModule?: ImportModule;
}): Promise<ModuleSource> {
  const { sourceId, specifier } = props;
  const what = `source "${sourceId}": module ${specifier}`;
  const href = resolveModule(specifier, props.baseDir);
  let loaded: unknown;
  try {
    loaded = await (props.importModule ?? importModule)(href);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new ModuleSourceError(
        'MODULE_SOURCE_NOT_FOUND',
        `${what} cannot be found (${href}); paths are relative to the configuration file`,
        {
          cause: error,
        },
      );
    }
    throw new ModuleSourceError(
      'MODULE_SOURCE_FAILED',
      `${what} failed to load: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const exports = (loaded ?? {}) as Record<string, unknown>;
  const entry = exports.default ?? exports.createSource;
  const expected =
    'it must default-export a factory (options, context) => ({ units() { ... } }), or a source object with units()';
  let source: unknown = entry;
  if (typeof entry === 'function') {
    try {
      source = await (entry as ModuleSourceFactory)(props.options, props.context);
    } catch (error) {
      throw new ModuleSourceError(
        'MODULE_SOURCE_FAILED',
        `${what}: its factory threw: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (!hasUnits(source)) {
      throw new ModuleSourceError(
        'MODULE_SOURCE_INVALID',
        `${what}: its factory returned ${describe(source)}; ${expected}`,
      );
    }
    return source;
  }
  if (hasUnits(source)) return source;
  const found = Object.keys(exports).join(', ') || 'nothing';
  throw new ModuleSourceError('MODULE_SOURCE_INVALID', `${what} exports ${found}; ${expected}`);
}

const hasUnits = (value: unknown): value is ModuleSource =>
  typeof value === 'object' && value !== null && typeof (value as { units?: unknown }).units === 'function';
