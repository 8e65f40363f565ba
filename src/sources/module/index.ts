/** The module source: a source implemented by the user's JS/TS module, validated like CSV rows. */
export type {
  ModuleBatch,
  ModuleSource,
  ModuleSourceContext,
  ModuleSourceFactory,
  ModuleUnit,
} from './contract.js';
export { ModuleSourceError, type ModuleSourceErrorCode } from './errors.js';
export { type ImportModule, resolveModule } from './module-loader.js';
export { createModuleSource, type ModuleSourceConfigInput, type ModuleSourceProps } from './module-source.js';
