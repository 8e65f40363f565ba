import type { Address, DateParts, RecordKind } from '../domain/records.js';
import type { BatchDiff, FailureInput, FailureRow, MappedRecord, RunStatus } from '../domain/sync-state.js';
import type { AccountCreateBody, AccountUpdateBody } from '../mapping/account-payload.js';
import type { DocumentCreateInput } from '../mapping/document-payload.js';

export type DocumentKind = 'invoice' | 'creditNote';

export interface RemoteSource {
  connectionId: string;
  sourceId: string;
  connectorType: string;
}

export interface RemoteAccount {
  id: string;
  fullName: string;
  currencyCode: string;
  billingAddress: Partial<Address> | null;
  source: RemoteSource | null;
  readOnlyReason: string | null;
}

export interface RemoteDocument {
  id: string;
  sourceId: string | null;
  accountId: string;
  number: string;
  paidAmount?: string | undefined;
  dueDate?: DateParts | null | undefined;
  readOnlyReason: string | null;
}

export interface RemoteTag {
  id: string;
  name: string;
}

/** Every write carries the Idempotency-Key the sync stored before sending it. */
export interface Write {
  idempotencyKey: string;
}

export interface PdfFile {
  bytes: Buffer;
  fileName: string;
}

/**
 * The ports of the sync engine: what it needs from the Public API and from the state DB, declared
 * here by the engine (their consumer), in the engine's words. `src/app/` hands in the adapters:
 * the API client's (`app/sync-api.ts`) and the state DB's repositories (`state/`); the engine's
 * unit tests hand in in-memory fakes (`test/unit/sync/fakes.ts`).
 */

/**
 * What the sync engine needs from the Public API, and nothing more: the narrow port the engine is
 * tested against.
 */
export interface SyncApi {
  readonly organizationId: string;
  /**
   * Accounts found with the `source` filter for these source ids (at most 50 a call). What that
   * filter compares is not shown in the spec (a server may match the connectionId or the connector
   * type): the engine keeps only accounts whose `source` names its connection and the source id.
   */
  findAccountsBySourceIds(sourceIds: readonly string[]): Promise<RemoteAccount[]>;
  /**
   * Every account of the organization linked to a source (`source:isNotEmpty`, pages of 100): the
   * fallback when the filter does not find an account the API says is linked.
   */
  listLinkedAccounts(): Promise<RemoteAccount[]>;
  createAccount(body: AccountCreateBody, write: Write): Promise<RemoteAccount>;
  updateAccount(accountId: string, body: AccountUpdateBody, write: Write): Promise<RemoteAccount>;
  /** `PATCH /accounts/{id}/source` with `lastUpdate`. */
  touchAccountSource(accountId: string, lastUpdate: string, write: Write): Promise<RemoteAccount>;
  /**
   * `PUT /accounts/{id}/source` with this connection and `sourceId`: links the source again (a row
   * that comes back after its account was unlinked). Refused (400) when another source is linked.
   */
  linkAccountSource(
    accountId: string,
    link: { connectionId: string; sourceId: string; lastUpdate: string },
    write: Write,
  ): Promise<RemoteAccount>;
  /** `DELETE /accounts/{id}/source`: the account becomes an orphan, never deleted. */
  unlinkAccountSource(accountId: string): Promise<void>;
  listTags(): Promise<RemoteTag[]>;
  createTag(name: string, write: Write): Promise<RemoteTag>;
  attachTags(accountId: string, tagIds: readonly string[], write: Write): Promise<void>;
  detachTag(accountId: string, tagId: string): Promise<void>;
  /** Documents of `kind` whose sourceId is one of `sourceIds` (at most 50 a call). */
  findDocumentsBySourceIds(kind: DocumentKind, sourceIds: readonly string[]): Promise<RemoteDocument[]>;
  /**
   * The server takes the paid amount in the creation (`api.compat.createPaid`): the create then
   * carries it, and the document write follows only when the answer shows another amount.
   */
  readonly createsPaid?: boolean;
  createDocument(
    kind: DocumentKind,
    input: DocumentCreateInput,
    file: PdfFile,
    write: Write,
  ): Promise<RemoteDocument>;
  patchDocument(
    kind: DocumentKind,
    documentId: string,
    body: { paidAmount?: string; dueDate?: DateParts },
    write: Write,
  ): Promise<RemoteDocument>;
}

/** The record map: source key -> API id, fingerprint and what was last written, per source and kind. */
export interface RecordMapStore {
  /**
   * Compares fingerprints with the state in one query: returns the records held with another
   * fingerprint (with what is held of them) and the keys not held at all. Unchanged keys are absent.
   */
  diff(sourceId: string, kind: RecordKind, fingerprints: ReadonlyMap<string, string>): Promise<BatchDiff>;
  /** Rewrites fingerprints of records whose content did not change (a fingerprint of another form). */
  setFingerprints(
    sourceId: string,
    kind: RecordKind,
    fingerprints: ReadonlyMap<string, string>,
  ): Promise<void>;
  getMany(sourceId: string, kind: RecordKind, keys: readonly string[]): Promise<Map<string, MappedRecord>>;
  /**
   * Stores what was written of a record; `completing`: the key of the pending write that produced
   * it, finished in the same transaction.
   */
  save(
    sourceId: string,
    kind: RecordKind,
    record: MappedRecord,
    runId: string | null,
    options?: { completing?: string },
  ): Promise<void>;
  /** Records of the kind held, counted no further than `max`. */
  countUpTo(sourceId: string, kind: RecordKind, max: number): Promise<number>;
  /**
   * A page of the keys of the kind whose source is still linked, in key order after `after`, with
   * the tags last written: a snapshot unit's absent records are among them.
   */
  linkedKeysPage(
    sourceId: string,
    kind: RecordKind,
    after: string | null,
    limit: number,
  ): Promise<Array<{ sourceKey: string; tags: string[] }>>;
  /** How many records of the kind have their source still linked (with `linkedKeysPage`). */
  countLinked(sourceId: string, kind: RecordKind): Promise<number>;
  /** Every fingerprint of the kind, or null when there are more than `max`. */
  fingerprints(sourceId: string, kind: RecordKind, max: number): Promise<Map<string, string> | null>;
  /** The source records as last synced (full re-sync, record re-sync). */
  storedRecords(
    sourceId: string,
    filter?: { kind?: RecordKind; keys?: readonly string[] },
  ): Promise<Array<{ kind: RecordKind; sourceKey: string; record: Record<string, unknown> }>>;
  /** Forgets the fingerprints of these records, so the next pass compares them again. */
  resetHash(sourceId: string, kind: RecordKind, keys: readonly string[]): Promise<void>;
  /** Forgets every fingerprint of the source (a full re-sync). */
  resetHashes(sourceId: string): Promise<number>;
  /** Storage upkeep after many writes; true when it ran. */
  maintainIfGrown(): Promise<boolean>;
}

/** A write that must not run twice: its Idempotency-Key, stored before it is sent. */
export interface PendingWriteRef {
  sourceId: string;
  kind: RecordKind;
  sourceKey: string;
  operation: string;
}

/** Idempotency keys written before a write is sent, so a retry after a crash reuses the same key. */
export interface PendingWriteStore {
  /** The key to send: the stored one when the same body was pending, else a new one (stored first). */
  begin(ref: PendingWriteRef, bodyHash: string): Promise<string>;
  /** The write got a final answer: its key is no longer needed. */
  finish(key: string): Promise<void>;
  /**
   * Drops the keys of writes that will not be sent again as they were: every pending write of a
   * record found on the service and adopted (after a crash that came after a write took effect),
   * or of one `operation` when given.
   */
  forget(ref: Omit<PendingWriteRef, 'operation'> & { operation?: string }): Promise<void>;
}

/** Records that failed, one open failure per record; resolved when the record later syncs. */
export interface FailureStore {
  record(input: FailureInput): Promise<void>;
  /** Several failures (a batch's refused rows) in one statement; a key given twice keeps the last. */
  recordMany(inputs: readonly FailureInput[]): Promise<void>;
  /** The kinds of which the source has open failures (a pass resolves failures of those kinds only). */
  openKinds(sourceId: string): Promise<Set<RecordKind>>;
  /**
   * Resolves the open failures of these records; `sparing` leaves those of one stage open (an
   * unchanged row does not mend what a reconciliation found on the service); `only` resolves those
   * of one stage alone (a file read to its end mends the file's failure, not its rows').
   */
  resolve(
    sourceId: string,
    kind: RecordKind,
    sourceKeys: readonly string[],
    options?: { sparing?: string; only?: string },
  ): Promise<void>;
  open(filter?: {
    sourceId?: string | undefined;
    kind?: RecordKind;
    sourceKeys?: readonly string[];
    /** Only these failures (by id): a retry of the ones a user selected. */
    ids?: readonly string[];
  }): Promise<FailureRow[]>;
}

/** What a run did to one record; unchanged records are not recorded. */
export interface TouchedRecord {
  kind: RecordKind;
  sourceKey: string;
  outcome: 'created' | 'updated' | 'failed';
}

/** The records each run created, updated or failed, kept for the dashboard's run and record pages. */
export interface RunRecordStore {
  /**
   * Adds what a run did to these records, with the API id the record map holds for each (none for
   * a record that never synced): one write per engine batch.
   */
  record(runId: string, sourceId: string, records: readonly TouchedRecord[]): Promise<void>;
}

/** One row per pass of one source, with its counts. */
export interface RunStore {
  start(sourceId: string, trigger: string, dryRun: boolean): Promise<string>;
  finish(
    id: string,
    status: RunStatus,
    counts: Record<string, unknown>,
    error?: string | null,
  ): Promise<void>;
  /**
   * Adds these keys to a run's counts, over what they held (the files a pass could not read,
   * `rejectedFiles`, told once the pass is over).
   */
  addToCounts(id: string, facts: Record<string, unknown>): Promise<void>;
  /** Who asked to cancel this run in progress (the dashboard's Cancel), or null: asked before each batch. */
  cancelRequest(id: string): Promise<string | null>;
}

/** The stream cursors of a source, as far as the engine touches them (a full re-sync resets them). */
export interface CursorReset {
  reset(sourceId: string): Promise<unknown>;
}

/** Everything the engine reads and writes in the state DB. */
export interface SyncState {
  recordMap: RecordMapStore;
  pending: PendingWriteStore;
  failures: FailureStore;
  runs: RunStore;
  cursors: CursorReset;
  runRecords: RunRecordStore;
}
