/**
 * `PUT /invoices/by-source-id/{sourceId}` and `PUT /credit-notes/by-source-id/{sourceId}`: the
 * spec's "upserts of documents keyed by sourceId" (path not shown; chosen here). The body is the
 * multipart creation form; the path's `sourceId` keys the document. Absent: created (201).
 * Present: its mutable fields are replaced (200). The owning account and the sourceId never change.
 */

import type { FastifyInstance } from 'fastify';
import { compareDecimal } from '../../domain/decimal.js';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { ApiError, badRequest } from '../errors.js';
import type { DocumentRecord } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { documentJson } from '../resources/document-view.js';
import { assertWritable, auditAccountCommand } from '../resources/guards.js';
import { documentMetadata, formAccount, multipartForm, newDocument } from './document-create.js';
import { addressFor, CREDIT_NOTE, type DocumentForm, INVOICE, type KindSpec } from './document-input.js';
import { assertNumberFree, documentBySourceId } from './document-rules.js';

/** Checks that an update keeps the document's invariants: same account, paid ≤ total. */
function assertUpdatable(spec: KindSpec, doc: DocumentRecord, form: DocumentForm): void {
  assertWritable(doc, `This ${spec.label.toLowerCase()}`);
  if (doc.accountId !== form.accountId) {
    throw new ApiError(
      400,
      `${spec.codePrefix}.account-mismatch`,
      `${spec.label} "${doc.sourceId}" belongs to account ${doc.accountId}; a document cannot move to another account`,
    );
  }
  if (compareDecimal(doc.paidAmount, form.totalAmount) > 0) {
    throw badRequest(
      `totalAmount ${form.totalAmount} is below the paidAmount ${doc.paidAmount} already recorded`,
    );
  }
}

function registerUpsert(app: FastifyInstance, deps: SandboxDeps, spec: KindSpec): void {
  const { store } = deps;
  app.put(`${spec.path}/by-source-id/:sourceId`, requires(ACCOUNTS_WRITE), async (request, reply) => {
    const { sourceId } = request.params as { sourceId: string };
    const form = multipartForm(request, spec, deps);
    if (form.sourceId !== null && form.sourceId !== sourceId) {
      throw badRequest('sourceId in the form differs from the sourceId of the path');
    }
    const account = formAccount(store, form, authOf(request).userId);
    const existing = documentBySourceId(store, spec, account.organizationId, sourceId);
    if (!existing) {
      const doc = newDocument(store, spec, { ...form, sourceId }, account);
      store.documents.set(doc.id, doc);
      auditAccountCommand(deps, request, account, `Create${spec.action}`, documentMetadata(doc));
      return reply.code(201).send(documentJson(store, doc, store.clock.now()));
    }
    assertUpdatable(spec, existing, form);
    assertNumberFree(store, spec, account.id, form.number, existing.id);
    Object.assign(existing, {
      number: form.number,
      issuedDate: form.issuedDate,
      dueDate: form.dueDate,
      totalAmount: form.totalAmount,
      taxAmount: form.taxAmount,
      billingAddress: addressFor(account, form.billingAddress),
      file: form.file ?? existing.file,
      ...(form.paidAmount !== null ? { paidAmount: form.paidAmount } : {}),
      updatedAt: store.nowIso(),
    });
    auditAccountCommand(deps, request, account, `Update${spec.action}`, documentMetadata(existing));
    return documentJson(store, existing, store.clock.now());
  });
}

export function registerDocumentUpsertRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerUpsert(app, deps, INVOICE);
  registerUpsert(app, deps, CREDIT_NOTE);
}
