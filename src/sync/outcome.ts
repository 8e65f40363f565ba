import { ReceivablesError } from '../api/errors.js';
import type { RecordKind } from '../domain/records.js';

export type Outcome = 'created' | 'updated' | 'unchanged' | 'failed';

export interface KindCounts {
  created: number;
  updated: number;
  unchanged: number;
  failed: number;
}

export const emptyCounts = (): KindCounts => ({ created: 0, updated: 0, unchanged: 0, failed: 0 });

export type SummaryKey = 'accounts' | 'invoices' | 'creditNotes';
export const SUMMARY_KEY: Readonly<Record<RecordKind, SummaryKey>> = {
  account: 'accounts',
  invoice: 'invoices',
  creditNote: 'creditNotes',
};

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
export class RecordFailure extends Error {
  constructor(readonly reason: FailureReason) {
    super(reason.message);
    this.name = 'RecordFailure';
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
  if (error instanceof ReceivablesError) {
    const api = error as ReceivablesError & { status?: number; apiCode?: string };
    return {
      stage,
      message: error.message,
      status: api.status ?? null,
      apiCode: api.apiCode ?? error.code,
      retryable: error.retryable,
    };
  }
  return {
    stage,
    message: error instanceof Error ? error.message : String(error),
    status: null,
    apiCode: null,
    retryable: true,
  };
}
