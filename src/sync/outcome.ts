import { AppError, errorCodeOf, isRetryable, messageOf } from '../domain/errors.js';

export type Outcome = 'created' | 'updated' | 'unchanged' | 'failed';

export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

export const emptyCounts = (): KindCounts => ({ created: 0, updated: 0, unchanged: 0, failed: 0 });

/** Why a record failed, ready to be stored and shown. */
export interface FailureReason {
  stage: string;
  message: string;
  status: number | null;
  apiCode: string | null;
  retryable: boolean;
  column?: string;
}

/** Thrown inside the engine to fail one record with a reason (never escapes a batch). */
export class RecordFailure extends AppError {
  constructor(readonly reason: FailureReason) {
    // Retryable or not as the reason says (a 5xx of the API, a record the API refuses for good).
    super('SYNC_RECORD_FAILED', reason.message, { retryable: reason.retryable });
  }
}

export const fail = (stage: string, message: string, retryable = false, column?: string): RecordFailure =>
  new RecordFailure({
    stage,
    message,
    status: null,
    apiCode: null,
    retryable,
    ...(column ? { column } : {}),
  });

/** Turns whatever a write threw into a stored reason: the API's status and code when it answered. */
export function reasonOf(error: unknown, stage: string): FailureReason {
  if (error instanceof RecordFailure) return error.reason;
  return {
    stage,
    message: messageOf(error),
    status: error instanceof AppError ? (error.status ?? null) : null,
    apiCode: errorCodeOf(error) ?? null,
    retryable: isRetryable(error),
  };
}
