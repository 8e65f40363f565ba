import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Clock, systemClock } from '../../domain/clock.js';
import { STREAM_ORDER, type Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { CursorStore } from '../ports.js';
import type { Source, SourceBatch, SourceUnit } from '../source.js';
import type { ModuleSourceContext, ModuleUnit } from './contract.js';
import { ModuleSourceError } from './errors.js';
import { type ImportModule, loadModuleSource, resolveModule } from './module-loader.js';
import { checkModuleBatch, describe } from './record-check.js';

/** The `sources[]` entry of a module source. */
export interface ModuleSourceConfigInput {
  id: string;
  /** A path (relative to `baseDir`) or a package name. */
  module: string;
  /** Handed to the module's factory as is. */
  options?: Record<string, unknown> | undefined;
}

export interface ModuleSourceProps {
  config: ModuleSourceConfigInput;
  cursors: CursorStore;
  logger: Logger;
  clock?: Clock;
  /** The environment handed to the module (`context.env`); the composition root passes the process's. Default: empty. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The folder a relative `module` path is resolved from; default the current directory. */
  baseDir?: string;
  importModule?: ImportModule;
}

/**
 * A source implemented by the user's JS or TS module (see `contract.ts` and `examples/module-source/`).
 * The module is loaded at the start of each pass; its units and batches are checked, and every record
 * it yields is validated like a CSV row: the engine only ever sees records that meet the contract.
 */
export function createModuleSource(props: ModuleSourceProps): Source {
  const { config, cursors } = props;
  const baseDir = props.baseDir ?? process.cwd();
  const href = resolveModule(config.module, baseDir);
  const moduleDir = href.startsWith('file:') ? dirname(fileURLToPath(href)) : baseDir;
  const log = props.logger.child({ source: config.id });
  const context: ModuleSourceContext = {
    sourceId: config.id,
    logger: log,
    clock: props.clock ?? systemClock,
    env: props.env ?? {},
    moduleDir,
    cursors: {
      get: (stream) => cursors.get(config.id, stream),
      set: (stream, cursor) => cursors.set(config.id, stream, cursor),
    },
  };

  async function* units(signal?: AbortSignal): AsyncGenerator<SourceUnit> {
    const inner = await loadModuleSource({
      sourceId: config.id,
      specifier: config.module,
      baseDir,
      options: config.options ?? {},
      context,
      ...(props.importModule ? { importModule: props.importModule } : {}),
    });
    for await (const unit of iterable(inner.units(signal), `source "${config.id}": units()`)) {
      if (signal?.aborted) return;
      yield wrapUnit(config.id, moduleDir, unit);
    }
  }

  return { id: config.id, type: 'module', units };
}

function wrapUnit(sourceId: string, moduleDir: string, value: unknown): SourceUnit {
  const unit = value as Partial<ModuleUnit> | null;
  if (typeof unit !== 'object' || unit === null || typeof unit.batches !== 'function') {
    throw new ModuleSourceError(
      'MODULE_UNIT_INVALID',
      `source "${sourceId}": a unit must be an object { stream, batches(), complete?() }, got ${describe(value)}`,
    );
  }
  const stream = unit.stream as Stream;
  if (!STREAM_ORDER.includes(stream)) {
    throw new ModuleSourceError(
      'MODULE_UNIT_INVALID',
      `source "${sourceId}": a unit's stream must be one of ${STREAM_ORDER.join(', ')}, got ${describe(unit.stream)}`,
    );
  }
  const name = typeof unit.name === 'string' && unit.name !== '' ? unit.name : `${sourceId}/${stream}`;
  const ctx = { stream, unitName: name, moduleDir };
  const batches = unit.batches.bind(unit);
  return {
    name,
    stream,
    async *batches(): AsyncGenerator<SourceBatch> {
      for await (const batch of iterable(batches(), `${name}: batches()`))
        yield await checkModuleBatch(ctx, batch);
    },
    complete: async (outcome) => {
      await unit.complete?.(outcome);
    },
    abandon: async (reason) => {
      await unit.abandon?.(reason);
    },
    release: async () => {
      await unit.release?.();
    },
  };
}

/** A module's `units()` and `batches()` may return a sync or an async iterable (a generator, an array). */
function iterable(value: unknown, what: string): AsyncIterable<unknown> | Iterable<unknown> {
  const it = value as { [Symbol.asyncIterator]?: unknown; [Symbol.iterator]?: unknown } | null;
  if (
    it !== null &&
    typeof it === 'object' &&
    (typeof it[Symbol.asyncIterator] === 'function' || typeof it[Symbol.iterator] === 'function')
  ) {
    return it as AsyncIterable<unknown> | Iterable<unknown>;
  }
  throw new ModuleSourceError(
    'MODULE_UNIT_INVALID',
    `${what} must return an iterable (an async generator, an array), got ${describe(value)}`,
  );
}
