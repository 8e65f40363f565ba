import type { ColumnType, Generated, JSONColumnType } from 'kysely';

/** Timestamps are written as Date or ISO strings and read back as Date. */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** Text that inserts may leave out (null). */
type OptionalText = ColumnType<string | null, string | null | undefined, string | null>;
type Json<T extends object | null> = JSONColumnType<T, T | string, T | string>;
/**
 * The connection or organization a row belongs to (migration 0007; see `state/scopes.ts`). The
 * repositories always write it; inserts may leave it out (`default` and '', "not stamped yet").
 */
type ScopeText = ColumnType<string, string | undefined, string>;

import type { RecordKind } from '../domain/records.js';
import type { RunStatus } from '../domain/sync-state.js';

export type { RecordKind };

export interface SourcesTable {
  id: string;
  type: string;
  paused: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Why it is paused (migration 0005), e.g. `paused automatically after 3 failed runs: ...`. */
  pause_reason: OptionalText;
  paused_at: NullableTimestamp;
  /** `auto` (failed runs) or `user` (the dashboard). */
  paused_by: ColumnType<'auto' | 'user' | null, 'auto' | 'user' | null | undefined, 'auto' | 'user' | null>;
  /** The last resume: failed runs before it do not count towards an automatic pause. */
  resumed_at: NullableTimestamp;
}

export interface RunCounts {
  [kind: string]: { created: number; updated: number; unchanged: number; failed: number };
}

export interface RunsTable {
  id: Generated<string>;
  connection_id: ScopeText;
  organization_id: ScopeText;
  source_id: string;
  trigger: string;
  status: RunStatus;
  dry_run: Generated<boolean>;
  counts: Json<Record<string, unknown>>;
  error: string | null;
  started_at: Timestamp;
  finished_at: NullableTimestamp;
}

export interface CursorsTable {
  connection_id: ScopeText;
  organization_id: ScopeText;
  source_id: string;
  stream: string;
  cursor: Json<Record<string, unknown>> | null;
  updated_at: Timestamp;
}

export interface RecordMapTable {
  connection_id: ScopeText;
  organization_id: ScopeText;
  source_id: string;
  kind: RecordKind;
  source_key: string;
  api_id: string;
  content_hash: string;
  synced_state: Json<Record<string, unknown>>;
  /** The record as last synced (migration 0002). */
  record: Json<Record<string, unknown>> | null;
  synced_at: Timestamp;
  last_run_id: string | null;
}

export interface PendingWritesTable {
  idempotency_key: string;
  connection_id: ScopeText;
  organization_id: ScopeText;
  source_id: string;
  kind: RecordKind;
  source_key: string;
  operation: string;
  body_hash: string;
  attempts: Generated<number>;
  created_at: Timestamp;
}

export interface FailuresTable {
  id: Generated<string>;
  connection_id: ScopeText;
  organization_id: ScopeText;
  source_id: string;
  kind: RecordKind;
  source_key: string;
  stage: string;
  status: number | null;
  api_code: string | null;
  message: string;
  file: string | null;
  line: number | null;
  column_name: string | null;
  retryable: Generated<boolean>;
  attempts: Generated<number>;
  next_retry_at: NullableTimestamp;
  payload: Json<Record<string, unknown>> | null;
  run_id: string | null;
  first_failed_at: Timestamp;
  last_failed_at: Timestamp;
  resolved_at: NullableTimestamp;
  /** Set with `resolved_at` when a user dismissed the failure (migration 0004). */
  dismissed_at: NullableTimestamp;
  dismissed_reason: OptionalText;
  dismissed_by: OptionalText;
}

/** The records a run created, updated or failed (migration 0004); unchanged ones are not kept. */
export interface RunRecordsTable {
  id: Generated<string>;
  run_id: string;
  kind: RecordKind;
  source_key: string;
  outcome: 'created' | 'updated' | 'failed';
  api_id: OptionalText;
  at: Timestamp;
}

/** The log lines of a run, bounded (migration 0004). */
export interface RunLogsTable {
  id: Generated<string>;
  run_id: string;
  at: Timestamp;
  level: string;
  msg: string;
  fields: Json<Record<string, unknown>> | null;
}

export interface DropFilesTable {
  id: Generated<string>;
  source_id: string;
  name: string;
  checksum: string;
  size: string | number;
  status: 'done' | 'partial' | 'failed' | 'rejected' | 'duplicate';
  rows: Generated<number>;
  failed_rows: Generated<number>;
  error: string | null;
  archived_path: string | null;
  report_path: string | null;
  claimed_at: Timestamp;
  finished_at: NullableTimestamp;
}

export interface CredentialsTable {
  id: string;
  ciphertext: string;
  updated_at: Timestamp;
}

/** One reconciliation of one source (migration 0006; see `state/reconciliations.ts`). */
export interface ReconciliationsTable {
  id: Generated<string>;
  source_id: string;
  /** `cli`, `schedule`, `dashboard`... */
  trigger: string;
  repair: Generated<boolean>;
  status: 'running' | 'done' | 'failed';
  started_at: Timestamp;
  finished_at: NullableTimestamp;
  /** Drifted records left at its end (after a repair: what remains). */
  drift: Generated<number>;
  /** category -> kind -> count. */
  counts: ColumnType<Record<string, Record<string, number>>, string | undefined, string>;
  /** The drifted records, bounded (`items_total` says how many there were). */
  items: ColumnType<Array<Record<string, unknown>>, string | undefined, string>;
  items_total: Generated<number>;
  /** What a repair did: action -> count. */
  repairs: ColumnType<Record<string, number>, string | undefined, string>;
  /** API requests it made (lists, lookups, repairs). */
  requests: Generated<number>;
  error: OptionalText;
}

export interface StateSchema {
  sources: SourcesTable;
  runs: RunsTable;
  cursors: CursorsTable;
  record_map: RecordMapTable;
  pending_writes: PendingWritesTable;
  failures: FailuresTable;
  drop_files: DropFilesTable;
  credentials: CredentialsTable;
  run_records: RunRecordsTable;
  run_logs: RunLogsTable;
  reconciliations: ReconciliationsTable;
}
