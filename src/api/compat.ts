import {
  CONTRACT_CREATE_PAID_FIELD,
  CONTRACT_DOCUMENT_ROUTE,
  type DocumentRoute,
} from '../domain/document-route.js';
import type { PatchDocumentInput } from './types.js';

/**
 * Where the spec says "not shown" and the client depends on the answer, the server's choice as a
 * setting (`api.compat` in the configuration; the sandbox has a matching switch for each). The
 * other "not shown" choices (the status of `managed-action-forbidden` and of a duplicate source,
 * what the `/accounts` `source` filter compares, the protected resource's `resource` form) need no
 * setting: the client detects and tolerates every variant (docs/compatibility.md).
 */
export interface ApiCompat {
  /** The write that sets the paid amount / due date of a document ("a PATCH ... exists; paths and bodies not shown"). */
  documentPatch: DocumentPatchRoute;
  /**
   * Whether `POST /invoices` takes the paid amount (`createPaidField`): true saves the follow-up
   * write of every paid invoice. When the answer does not show the paid amount sent, the client
   * still sends the document write, so a server that ignores the field loses nothing.
   */
  createPaid: boolean;
  createPaidField: string;
}

export type DocumentPatchRoute = DocumentRoute;
export type DocumentWriteMethod = DocumentRoute['method'];

/** The contract's choices (docs/contract: "Where the spec says 'not shown': the defaults"). */
export const DEFAULT_API_COMPAT: ApiCompat = {
  documentPatch: CONTRACT_DOCUMENT_ROUTE,
  createPaid: false,
  createPaidField: CONTRACT_CREATE_PAID_FIELD,
};

export type DocumentPathKind = 'invoices' | 'credit-notes';

/** The path of the document write for one document. */
export function documentPatchPath(route: DocumentPatchRoute, kind: DocumentPathKind, id: string): string {
  return route.path.replaceAll('{kind}', kind).replaceAll('{id}', encodeURIComponent(id));
}

/** The body of the document write, under the server's field names. */
export function documentPatchBody(
  route: DocumentPatchRoute,
  input: PatchDocumentInput,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (input.paidAmount !== undefined) body[route.paidAmountField] = input.paidAmount;
  if (input.dueDate !== undefined) body[route.dueDateField] = input.dueDate;
  return body;
}

/** A readable form of the route for messages: `PATCH /invoices/{id} {paidAmount, dueDate}`. */
export function describeDocumentRoute(route: DocumentPatchRoute): string {
  return `${route.method} ${route.path} {${route.paidAmountField}, ${route.dueDateField}}`;
}

/**
 * An answer that says the route itself is unknown, not the document: a 405, or a 404 in the words
 * web frameworks use for it ("Route PATCH:/x not found", "Cannot PATCH /x"). A 404 for a document
 * that does not exist says nothing of the kind.
 */
export function isUnknownRouteAnswer(status: number, message: string | undefined): boolean {
  if (status === 405) return true;
  return (
    status === 404 && /\broute\b|\bcannot (patch|put|post)\b|no handler|not implemented/i.test(message ?? '')
  );
}
