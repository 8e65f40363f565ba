import type { Address, DateParts } from '../domain/records.js';
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
 * What the sync engine needs from the Public API, and nothing more: the narrow port the engine is
 * tested against. `api/sync-adapter.ts` implements it over the full client.
 */
export interface SyncApi {
  readonly organizationId: string;
  /** Accounts whose source's sourceId is one of `sourceIds` (at most 50 a call). */
  findAccountsBySourceIds(sourceIds: readonly string[]): Promise<RemoteAccount[]>;
  createAccount(body: AccountCreateBody, write: Write): Promise<RemoteAccount>;
  updateAccount(accountId: string, body: AccountUpdateBody, write: Write): Promise<RemoteAccount>;
  /** `PATCH /accounts/{id}/source` with `lastUpdate`. */
  touchAccountSource(accountId: string, lastUpdate: string, write: Write): Promise<RemoteAccount>;
  /** `DELETE /accounts/{id}/source`: the account becomes an orphan, never deleted. */
  unlinkAccountSource(accountId: string): Promise<void>;
  listTags(): Promise<RemoteTag[]>;
  createTag(name: string, write: Write): Promise<RemoteTag>;
  attachTags(accountId: string, tagIds: readonly string[], write: Write): Promise<void>;
  detachTag(accountId: string, tagId: string): Promise<void>;
  /** Documents of `kind` whose sourceId is one of `sourceIds` (at most 50 a call). */
  findDocumentsBySourceIds(kind: DocumentKind, sourceIds: readonly string[]): Promise<RemoteDocument[]>;
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
