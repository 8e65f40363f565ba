import type { DateParts, RecordKind } from '../domain/records.js';
import type { RemoteAccount } from '../sync/ports.js';

/**
 * The vocabulary of a reconciliation: what the service holds for a source's connection, compared
 * with the record map (docs/reconcile.md).
 */

/**
 * Where a record drifted:
 * - `missing`: the record map's record is gone from the service (deleted there); nothing on the
 *   service carries its source id.
 * - `unresolved`: the record map's API id no longer resolves, but the service holds the record
 *   under another id (same connection and source id: re-created by hand, or a state DB restored
 *   from a backup).
 * - `orphan`: the service holds a record of this connection the record map does not know: an
 *   account whose source names this connection, a document with a `sourceId` on one of this
 *   connection's accounts.
 * - `readOnly`: linked to another source or a connector, or `readOnlyReason` set: no write of
 *   this tool can change it.
 * - `changed`: fields differ from what was last written.
 */
export type DriftCategory = 'missing' | 'unresolved' | 'orphan' | 'readOnly' | 'changed';
export const DRIFT_CATEGORIES: readonly DriftCategory[] = [
  'missing',
  'unresolved',
  'orphan',
  'readOnly',
  'changed',
];

/** One field that differs: what was last written (`expected`) and what the service holds. */
export interface FieldDiff {
  field: string;
  expected: unknown;
  actual: unknown;
  /** Frozen at creation (document number, amounts, dates but the due date, address): no write can fix it. */
  frozen?: boolean;
}

/** One drifted record. */
export interface DriftItem {
  category: DriftCategory;
  kind: RecordKind;
  /** The source key (the row's sourceId); for an orphan, the service's sourceId. */
  sourceKey: string;
  /** The API id the record map holds (absent for an orphan). */
  apiId?: string;
  /** The API id the service holds it under (an orphan, an unresolved record). */
  foundId?: string;
  /** Why it is read-only, or what it is linked to. */
  reason?: string;
  fields?: FieldDiff[];
  /** The record was already recorded as a failure by an earlier repair (read-only: held, not drift). */
  acknowledged?: boolean;
  /**
   * What `--repair` did to it: `replayed` (sent again through the sync engine: re-created, adopted
   * or set back to its last synced version) or `unlinked` (an orphan account's source removed).
   */
  repairedBy?: 'replayed' | 'unlinked';
}

/** category -> kind -> count. */
export type DriftCounts = Record<DriftCategory, Record<RecordKind, number>>;

/**
 * What the service holds of an account (the fields a reconciliation compares): the account as the
 * sync engine reads it from the service.
 */
export type ServiceAccount = RemoteAccount;

/** What the service holds of an invoice or a credit note. */
export interface ServiceDocument {
  id: string;
  sourceId: string | null;
  accountId: string;
  number: string;
  issuedDate: DateParts | null;
  dueDate: DateParts | null;
  totalAmount: string | null;
  taxAmount: string | null;
  paidAmount: string | null;
  readOnlyReason: string | null;
}

/** One record-map entry as a reconciliation reads it. */
export interface MapEntry {
  kind: RecordKind;
  sourceKey: string;
  apiId: string;
  syncedState: Record<string, unknown>;
  /** The source record as last synced, when stored. */
  record: Record<string, unknown> | null;
}

export type DocumentKind = 'invoice' | 'creditNote';
