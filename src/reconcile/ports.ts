import type { RecordKind } from '../domain/records.js';
import type { FailureStore } from '../sync/ports.js';
import type {
  DocumentKind,
  DriftCounts,
  DriftItem,
  MapEntry,
  ServiceAccount,
  ServiceDocument,
} from './types.js';

/**
 * The ports of a reconciliation, declared here by their consumer: what it reads from the Public
 * API (lists, in pages of 100, through the shared rate limiter) and from the state DB.
 */

/** What a reconciliation reads from (and the few writes it makes on) the Public API. */
export interface ReconcileApi {
  /** Every account of the organization linked to a source (`source:isNotEmpty`, pages of 100). */
  listLinkedAccounts(): Promise<ServiceAccount[]>;
  /** Every document of the kind carrying a `sourceId` (`sourceId:isNotEmpty`, pages of 100). */
  listDocuments(kind: DocumentKind): Promise<ServiceDocument[]>;
  /** One account by id; null when the service answers 404 (deleted). */
  getAccount(accountId: string): Promise<ServiceAccount | null>;
  /** `DELETE /accounts/{id}/source`: the account stays, no longer claimed by the connection. */
  unlinkAccountSource(accountId: string): Promise<void>;
  /** Requests made so far by this API's client (all of them: lists, checks, the engine's repairs). */
  requestCount(): number;
  /** List pages fetched so far by this port. */
  listPageCount(): number;
}

/** What a reconciliation stores of itself (`state/reconciliations.ts`). */
export interface ReconciliationStore {
  start(sourceId: string, trigger: string, repair: boolean): Promise<string>;
  finish(id: string, result: ReconciliationResult): Promise<void>;
  fail(id: string, error: string, requests: number): Promise<void>;
  /** The record map of a source, every kind, as a reconciliation compares it. */
  mapEntries(sourceId: string): Promise<MapEntry[]>;
  /** The open failures a repair recorded for held records (stage `reconcile`). */
  heldFailures(sourceId: string): Promise<Array<{ kind: RecordKind; sourceKey: string }>>;
}

/** What a reconciliation found (and, with `--repair`, did), as stored and reported. */
export interface ReconciliationResult {
  counts: DriftCounts;
  /** Every drifted record (the store keeps the first ones). */
  items: DriftItem[];
  /** Drifted records left at the end: exit 2 when above 0. */
  drift: number;
  /** action -> records (`recreatedOrAdopted`, `unlinked`, `recordedAsFailure`, `failed`). */
  repairs: Record<string, number>;
  requests: number;
}

/** The failures a reconciliation reads (held records already recorded) and records. */
export type ReconcileFailures = Pick<FailureStore, 'open' | 'record' | 'resolve'>;

export type { RecordKind };
