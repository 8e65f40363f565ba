import { AppError } from '../../domain/errors.js';

/** Stable codes of the Singer source's own errors (a record that fails its checks is a row problem). */
export type SingerSourceErrorCode =
  /** The configuration cannot work (a required column no path gives, no `command` for a scheduled pass). */
  | 'SINGER_CONFIG_INVALID'
  /** The tap could not be started (not found, not executable). */
  | 'SINGER_TAP_START_FAILED'
  /** The tap exited with a non-zero code, or was killed. */
  | 'SINGER_TAP_FAILED'
  /** The tap wrote nothing for `timeoutSeconds`: it was stopped. */
  | 'SINGER_TAP_TIMEOUT'
  /** A line of the input is not a Singer message (not JSON, no `type`, a RECORD before its SCHEMA). */
  | 'SINGER_MESSAGE_INVALID'
  /** `--discover` gave no catalog the source can select its streams in. */
  | 'SINGER_DISCOVERY_FAILED';

/**
 * An error of the Singer source. A tap that fails or hangs stops the pass (the cursor stays, the next
 * pass resumes from the last stored STATE); a broken message stream too: neither blames a record.
 */
export class SingerSourceError extends AppError {
  declare readonly code: SingerSourceErrorCode;
  constructor(code: SingerSourceErrorCode, message: string, options: { cause?: unknown } = {}) {
    const passing = code === 'SINGER_TAP_FAILED' || code === 'SINGER_TAP_TIMEOUT';
    super(code, message, {
      cause: options.cause,
      kind: code === 'SINGER_CONFIG_INVALID' ? 'config' : 'infrastructure',
      retryable: passing,
    });
  }
}
