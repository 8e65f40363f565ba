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
export class ModuleSourceError extends Error {
  readonly code: ModuleSourceErrorCode;
  readonly retryable = false;
  constructor(code: ModuleSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModuleSourceError';
    this.code = code;
  }
}
