/** `POST /invoices` and `POST /credit-notes`: multipart creation of documents. */

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { badRequest } from '../errors.js';
import type { Account, DocumentRecord } from '../model.js';
import { ACCOUNTS_WRITE } from '../oauth/scopes.js';
import { documentJson } from '../resources/document-view.js';
import { assertWritable, auditAccountCommand } from '../resources/guards.js';
import type { SandboxStore } from '../store.js';
import {
  addressFor,
  CREDIT_NOTE,
  type DocumentForm,
  documentForm,
  INVOICE,
  type KindSpec,
} from './document-input.js';
import { assertNumberFree, assertSourceIdFree } from './document-rules.js';

/** Documents created through this API carry this channel, set once. */
export const PUBLIC_API_CHANNEL = 'PublicApi';

/**
 * The validated form of a multipart request; a JSON request is refused (the PDF is a file part).
 * The paid amount is a field only where the server takes it (`compat.createPaid`).
 */
export function multipartForm(request: FastifyRequest, spec: KindSpec, deps: SandboxDeps): DocumentForm {
  if (!request.isMultipart()) {
    throw badRequest(`${spec.path} takes multipart/form-data (the document's fields and its PDF file)`);
  }
  const { createPaid, createPaidField } = deps.options.compat;
  return documentForm(request.body, spec, createPaid ? createPaidField : undefined);
}

/** The account a form names, visible to the caller and writable. */
export function formAccount(store: SandboxStore, form: DocumentForm, userId: string): Account {
  const account = store.accountFor(form.accountId, userId);
  assertWritable(account, 'The account');
  return account;
}

/** A new document from a validated form, after the uniqueness checks; not stored yet. */
export function newDocument(
  store: SandboxStore,
  spec: KindSpec,
  form: DocumentForm,
  account: Account,
): DocumentRecord {
  assertNumberFree(store, spec, account.id, form.number);
  assertSourceIdFree(store, spec, account.organizationId, form.sourceId);
  const now = store.nowIso();
  return {
    id: store.newId(),
    kind: spec.kind,
    organizationId: account.organizationId,
    accountId: account.id,
    number: form.number,
    issuedDate: form.issuedDate,
    dueDate: form.dueDate,
    totalAmount: form.totalAmount,
    taxAmount: form.taxAmount,
    paidAmount: form.paidAmount ?? '0.00',
    billingAddress: addressFor(account, form.billingAddress),
    file: form.file,
    sourceId: form.sourceId,
    channel: PUBLIC_API_CHANNEL,
    connectionId: null,
    readOnlyReason: null,
    paymentMethod: null,
    paymentSchedule: false,
    tagIds: [],
    createdAt: now,
    updatedAt: now,
  };
}

/** What the audit journal records about a document command. */
export const documentMetadata = (doc: DocumentRecord) => ({
  documentId: doc.id,
  number: doc.number,
  sourceId: doc.sourceId,
});

function registerCreate(app: FastifyInstance, deps: SandboxDeps, spec: KindSpec): void {
  const { store } = deps;
  app.post(spec.path, requires(ACCOUNTS_WRITE), async (request, reply) => {
    const form = multipartForm(request, spec, deps);
    const account = formAccount(store, form, authOf(request).userId);
    const doc = newDocument(store, spec, form, account);
    store.documents.set(doc.id, doc);
    auditAccountCommand(deps, request, account, `Create${spec.action}`, documentMetadata(doc));
    return reply.code(201).send(documentJson(store, doc, store.clock.now()));
  });
}

export function registerDocumentCreateRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerCreate(app, deps, INVOICE);
  registerCreate(app, deps, CREDIT_NOTE);
}
