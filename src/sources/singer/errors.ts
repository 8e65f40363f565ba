import type { ErrorCode } from '../../domain/error-codes.js';
import { AppError } from '../../domain/errors.js';

/**
 * Stable codes of the Singer source's own errors (a record that fails its checks is a row problem):
 * the catalogue's `SINGER_*`.
 */
export type SingerSourceErrorCode = Extract<ErrorCode, `SINGER_${string}`>;

/**
 * An error of the Singer source. A tap that fails or hangs stops the pass (the cursor stays, the next
 * pass resumes from the last stored STATE); a broken message stream too: neither blames a record.
 */
export class SingerSourceError extends AppError {
  declare readonly code: SingerSourceErrorCode;
  constructor(code: SingerSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, options);
  }
}
