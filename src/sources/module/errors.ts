import type { ErrorCode } from '../../domain/error-codes.js';
import { AppError } from '../../domain/errors.js';

/**
 * Stable codes of the module source's errors, each naming what the module must change: the
 * catalogue's `MODULE_*` (a unit of the wrong shape is that unit's data; anything else is the
 * module itself).
 */
export type ModuleSourceErrorCode = Extract<ErrorCode, `MODULE_${string}`>;

/** An error of a module source: the module needs a fix, retrying as is would not help. */
export class ModuleSourceError extends AppError {
  declare readonly code: ModuleSourceErrorCode;
  constructor(code: ModuleSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
