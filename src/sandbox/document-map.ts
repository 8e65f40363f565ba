import type { DocumentKind, DocumentRecord } from './model.js';

/**
 * The sandbox's documents by id, with the lookups every document write makes kept in two indexes:
 * the documents of a kind carrying a `sourceId` in an organization, and the documents of an
 * account. Found by scanning every document, each create cost the sandbox in proportion to the
 * documents it held (`sourceId` unique per organization, `number` per account): a first sync of
 * 100,000 records spent most of its machine's CPU in the sandbox, and one of a million was out of
 * reach (docs/performance.md, `bench:scale`).
 *
 * A stored document's kind, organization, account and `sourceId` never change (a PATCH or an upsert
 * changes its amounts, dates, number and file), so `set` and `delete` keep the indexes. Both list
 * documents in the order they were stored, as a scan of the map did.
 */
export class DocumentMap extends Map<string, DocumentRecord> {
  readonly #bySourceId = new Map<string, string[]>();
  readonly #byAccount = new Map<string, Set<string>>();

  override set(id: string, doc: DocumentRecord): this {
    const stored = this.get(id);
    super.set(id, doc);
    // The same document again keeps its place in the indexes, as in the map.
    if (stored && sameIdentity(stored, doc)) return this;
    if (stored) this.#unindex(id, stored);
    if (doc.sourceId !== null) {
      const key = sourceIdKey(doc.kind, doc.organizationId, doc.sourceId);
      const ids = this.#bySourceId.get(key);
      if (ids) ids.push(id);
      else this.#bySourceId.set(key, [id]);
    }
    const ofAccount = this.#byAccount.get(doc.accountId);
    if (ofAccount) ofAccount.add(id);
    else this.#byAccount.set(doc.accountId, new Set([id]));
    return this;
  }

  override delete(id: string): boolean {
    const stored = this.get(id);
    if (stored) this.#unindex(id, stored);
    return super.delete(id);
  }

  override clear(): void {
    this.#bySourceId.clear();
    this.#byAccount.clear();
    super.clear();
  }

  /** The first document stored of this kind with this `sourceId` in the organization (exact match). */
  bySourceId(kind: DocumentKind, organizationId: string, sourceId: string): DocumentRecord | undefined {
    const id = this.#bySourceId.get(sourceIdKey(kind, organizationId, sourceId))?.[0];
    return id === undefined ? undefined : this.get(id);
  }

  /** The documents of an account, in the order they were stored. */
  ofAccount(accountId: string): DocumentRecord[] {
    return [...(this.#byAccount.get(accountId) ?? [])].map((id) => this.get(id)!);
  }

  #unindex(id: string, doc: DocumentRecord): void {
    if (doc.sourceId !== null) {
      const key = sourceIdKey(doc.kind, doc.organizationId, doc.sourceId);
      const ids = this.#bySourceId.get(key)?.filter((other) => other !== id) ?? [];
      if (ids.length > 0) this.#bySourceId.set(key, ids);
      else this.#bySourceId.delete(key);
    }
    const ofAccount = this.#byAccount.get(doc.accountId);
    ofAccount?.delete(id);
    if (ofAccount?.size === 0) this.#byAccount.delete(doc.accountId);
  }
}

const sourceIdKey = (kind: DocumentKind, organizationId: string, sourceId: string) =>
  `${kind}\u0000${organizationId}\u0000${sourceId}`;

const sameIdentity = (a: DocumentRecord, b: DocumentRecord) =>
  a.kind === b.kind &&
  a.organizationId === b.organizationId &&
  a.accountId === b.accountId &&
  a.sourceId === b.sourceId;
