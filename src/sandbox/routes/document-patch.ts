/**
 * `PATCH /invoices/{id}` and `PATCH /credit-notes/{id}` with JSON
 * `{"paidAmount"?: "<decimal>", "dueDate"?: {"year", "month", "day"}}` (the contract's default for
 * the spec's "PATCH that sets a paid amount or a due date"). Value-setting, so safe to repeat.
 * On a credit note `paidAmount` is the allocated amount and `dueDate` is refused.
 */

import type { FastifyInstance } from 'fastify';
import { compareDecimal } from '../../domain/decimal.js';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import type { DocumentRecord } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
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

/** Validates the PATCH body against the document it will change. */
export function documentChanges(body: Fields, spec: KindSpec, doc: DocumentRecord): DocumentChanges {
  if (!spec.hasDueDate && body.dueDate !== undefined) {
    throw badRequest(`dueDate: a ${spec.label.toLowerCase()} has no due date`);
  }
  rejectUnknownFields(body, spec.hasDueDate ? ['paidAmount', 'dueDate'] : ['paidAmount']);
  const changes: DocumentChanges = {};
  if (body.paidAmount !== undefined) {
    const paidAmount = amountInput(body.paidAmount, 'paidAmount');
    if (compareDecimal(paidAmount, doc.totalAmount) > 0) {
      throw badRequest(`paidAmount must be from 0 to the totalAmount ${doc.totalAmount}, got ${paidAmount}`);
    }
    changes.paidAmount = paidAmount;
  }
  if (body.dueDate !== undefined) changes.dueDate = dateObjectInput(body.dueDate, 'dueDate');
  if (Object.keys(changes).length === 0) {
    throw badRequest(`the body must carry ${spec.hasDueDate ? 'paidAmount and/or dueDate' : 'paidAmount'}`);
  }
  return changes;
}

function registerPatch(app: FastifyInstance, deps: SandboxDeps, spec: KindSpec): void {
  const { store } = deps;
  app.patch(`${spec.path}/:documentId`, requires(ACCOUNTS_WRITE), async (request) => {
    const { documentId } = request.params as { documentId: string };
    const doc = documentFor(store, spec, documentId, authOf(request).userId);
    const changes = documentChanges(objectBody(request.body), spec, doc);
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
  });
}

export function registerDocumentPatchRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerPatch(app, deps, INVOICE);
  registerPatch(app, deps, CREDIT_NOTE);
}
