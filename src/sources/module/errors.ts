import { AppError } from '../../domain/errors.js';

/** Stable codes of the module source's errors: each names what the module must change. */
export type ModuleSourceErrorCode =
  /** The module file (or package) cannot be found. */
  | 'MODULE_SOURCE_NOT_FOUND'
  /** Importing the module threw, or its factory threw. */
  | 'MODULE_SOURCE_FAILED'
  /** The module exports no factory or source, or the factory returned something else. */
  | 'MODULE_SOURCE_INVALID'
  /** A unit or a batch of the module is not of the expected shape. */
  | 'MODULE_UNIT_INVALID';

/** An error of a module source: the module needs a fix, retrying as is would not help. */
export class ModuleSourceError extends AppError {
  declare readonly code: ModuleSourceErrorCode;
  constructor(code: ModuleSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    // A unit of the wrong shape is that unit's data; anything else is the module itself.
    super(code, message, { cause: options.cause, kind: code === 'MODULE_UNIT_INVALID' ? 'data' : 'config' });
  }
}
