/**
 * `PATCH /invoices/{id}` and `PATCH /credit-notes/{id}` with JSON
 * `{"paidAmount"?: "<decimal>", "dueDate"?: {"year", "month", "day"}}` (the contract's default for
 * the spec's "PATCH that sets a paid amount or a due date"). Value-setting, so safe to repeat.
 * On a credit note `paidAmount` is the allocated amount and `dueDate` is refused.
 *
 * Method, path and field names follow `compat.documentPatch` (the spec shows none of them): with
 * another route, the contract's one is not served (a PATCH there is an unknown route, 404).
 */

import type { FastifyInstance } from 'fastify';
import { compareDecimal } from '../../domain/decimal.js';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import type { DocumentRecord } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
import type { SandboxDocumentRoute } from '../options.js';
import { documentJson } from '../resources/document-view.js';
import { assertWritable, auditAccountCommand } from '../resources/guards.js';
import {
  amountInput,
  dateObjectInput,
  type Fields,
  objectBody,
  rejectUnknownFields,
} from '../resources/input.js';
import { documentMetadata } from './document-create.js';
import { CREDIT_NOTE, INVOICE, type KindSpec } from './document-input.js';
import { documentFor } from './document-rules.js';

type DocumentChanges = Partial<Pick<DocumentRecord, 'paidAmount' | 'dueDate'>>;

const CONTRACT_FIELDS = { paidAmountField: 'paidAmount', dueDateField: 'dueDate' };

/** Validates the body (under the route's field names) against the document it will change. */
export function documentChanges(
  body: Fields,
  spec: KindSpec,
  doc: DocumentRecord,
  fields: Pick<SandboxDocumentRoute, 'paidAmountField' | 'dueDateField'> = CONTRACT_FIELDS,
): DocumentChanges {
  const { paidAmountField: paid, dueDateField: due } = fields;
  if (!spec.hasDueDate && body[due] !== undefined) {
    throw badRequest(`${due}: a ${spec.label.toLowerCase()} has no due date`);
  }
  rejectUnknownFields(body, spec.hasDueDate ? [paid, due] : [paid]);
  const changes: DocumentChanges = {};
  if (body[paid] !== undefined) {
    const paidAmount = amountInput(body[paid], paid);
    if (compareDecimal(paidAmount, doc.totalAmount) > 0) {
      throw badRequest(`${paid} must be from 0 to the totalAmount ${doc.totalAmount}, got ${paidAmount}`);
    }
    changes.paidAmount = paidAmount;
  }
  if (body[due] !== undefined) changes.dueDate = dateObjectInput(body[due], due);
  if (Object.keys(changes).length === 0) {
    throw badRequest(`the body must carry ${spec.hasDueDate ? `${paid} and/or ${due}` : paid}`);
  }
  return changes;
}

/** The route's Fastify path for one kind: `{kind}` -> `invoices`, `{id}` -> `:documentId`. */
export function documentRoutePath(route: SandboxDocumentRoute, spec: KindSpec): string {
  return route.path.replaceAll('{kind}', spec.path.slice(1)).replaceAll('{id}', ':documentId');
}

function registerPatch(app: FastifyInstance, deps: SandboxDeps, specs: readonly KindSpec[]): void {
  const { store } = deps;
  const route = deps.options.compat.documentPatch;
  app.route({
    method: route.method,
    url: documentRoutePath(route, specs[0]!),
    ...requires(ACCOUNTS_WRITE),
    handler: async (request) => {
      const { documentId } = request.params as { documentId: string };
      // A path without {kind} serves both kinds: the document's own kind decides.
      const stored = store.documents.get(documentId);
      const spec = specs.find((s) => s.kind === stored?.kind) ?? specs[0]!;
      const doc = documentFor(store, spec, documentId, authOf(request).userId);
      const changes = documentChanges(objectBody(request.body), spec, doc, route);
      assertWritable(doc, `This ${spec.label.toLowerCase()}`);
      Object.assign(doc, changes, { updatedAt: store.nowIso() });
      const account = store.accounts.get(doc.accountId);
      if (account) {
        auditAccountCommand(deps, request, account, `Update${spec.action}`, {
          ...documentMetadata(doc),
          changes,
        });
      }
      return documentJson(store, doc, store.clock.now());
    },
  });
}

export function registerDocumentPatchRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  if (deps.options.compat.documentPatch.path.includes('{kind}')) {
    registerPatch(app, deps, [INVOICE]);
    registerPatch(app, deps, [CREDIT_NOTE]);
  } else {
    registerPatch(app, deps, [INVOICE, CREDIT_NOTE]);
  }
}
