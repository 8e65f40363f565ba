/** Uniqueness and visibility rules of invoices and credit notes. */

import { ApiError, notFound } from '../errors.js';
import type { DocumentRecord } from '../model.js';
import type { SandboxStore } from '../store.js';
import type { KindSpec } from './document-input.js';

/** The document of `spec`'s kind, when its organization is visible to the user; 404 otherwise. */
export function documentFor(store: SandboxStore, spec: KindSpec, id: string, userId: string): DocumentRecord {
  const doc = store.documents.get(id);
  if (!doc || doc.kind !== spec.kind || !store.isMember(doc.organizationId, userId))
    throw notFound(spec.label);
  return doc;
}

/** The document of this kind carrying `sourceId` in the organization (exact, case-sensitive match). */
export function documentBySourceId(
  store: SandboxStore,
  spec: KindSpec,
  organizationId: string,
  sourceId: string,
): DocumentRecord | undefined {
  return store.documents.bySourceId(spec.kind, organizationId, sourceId);
}

/** `sourceId` is unique per organization (and kind): a second document with it is refused. */
export function assertSourceIdFree(
  store: SandboxStore,
  spec: KindSpec,
  organizationId: string,
  sourceId: string | null,
): void {
  if (sourceId === null) return;
  const existing = documentBySourceId(store, spec, organizationId, sourceId);
  if (existing) {
    throw new ApiError(
      400,
      `${spec.codePrefix}.duplicate-source-id`,
      `${spec.label} with sourceId "${sourceId}" already exists (id ${existing.id}); find it with filters=sourceId:is:<sourceId>`,
    );
  }
}

/** `number` is unique per account (and kind), not per organization. */
export function assertNumberFree(
  store: SandboxStore,
  spec: KindSpec,
  accountId: string,
  number: string,
  self?: string,
): void {
  for (const doc of store.documents.ofAccount(accountId)) {
    if (doc.id === self || doc.kind !== spec.kind) continue;
    if (doc.number === number) {
      throw new ApiError(
        400,
        `${spec.codePrefix}.duplicate-number`,
        `${spec.label} number "${number}" already exists on this account (id ${doc.id})`,
      );
    }
  }
}
