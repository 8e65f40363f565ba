/**
 * `GET /invoices`, `GET /credit-notes` (filtered cursor lists) and `GET /invoices/{id}`,
 * `GET /credit-notes/{id}`. Operators per field are "not shown" by the spec except for
 * `sourceId`; the others are chosen by the field's kind (see docs/sandbox.md).
 */

import type { FastifyInstance } from 'fastify';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { compareStrings } from '../lists/filter-values.js';
import type { FilterAllowList, ListDefinition, ListQuery } from '../lists/index.js';
import { listPage } from '../lists/index.js';
import type { DocumentRecord } from '../model.js';
import { ACCOUNTS_READ } from '../oauth/scopes.js';
import { tagKeys } from '../resources/account-view.js';
import {
  CREDIT_NOTE_STATUSES,
  creditNoteStatus,
  dayKey,
  INVOICE_STATUSES,
  invoiceStatus,
  remainingBalance,
} from '../resources/derived.js';
import { documentJson } from '../resources/document-view.js';
import { organizationIdParam } from '../resources/input.js';
import { CREDIT_NOTE, INVOICE, type KindSpec } from './document-input.js';
import { documentFor } from './document-rules.js';

/** One document with the values derived for filtering, computed once per request. */
interface DocumentRow {
  doc: DocumentRecord;
  accountName: string;
  status: string;
  remaining: string;
  tags: string[];
}

const TEXT = ['contains', 'startsWith', 'equals', 'is', 'isAnyOf', 'isEmpty', 'isNotEmpty'] as const;
const NAME = ['contains', 'startsWith', 'equals'] as const;
const LIST = ['containsAny', 'containsAll', 'containsNone', 'isEmpty', 'isNotEmpty'] as const;
const ENUM = ['is', 'isNot', 'isAnyOf'] as const;
const NULLABLE_ENUM = ['is', 'isNot', 'isAnyOf', 'isEmpty', 'isNotEmpty'] as const;
const DATE = ['on', 'before', 'after', 'between'] as const;
const NUMBER = ['equals', 'greaterThan', 'lessThan', 'between'] as const;
const BOOLEAN = ['isTrue', 'isFalse'] as const;
/** The spec's own list for `sourceId`: exact lookups only, case-sensitive. */
const SOURCE_ID = ['is', 'isAnyOf', 'isEmpty', 'isNotEmpty'] as const;

/** Fields both lists share. */
const COMMON_FILTERS: FilterAllowList<DocumentRow> = {
  number: { kind: 'text', operators: TEXT, value: (r) => r.doc.number },
  accountName: { kind: 'text', operators: NAME, value: (r) => r.accountName },
  tags: { kind: 'list', operators: LIST, value: (r) => r.tags },
  paymentMethod: { kind: 'text', operators: NULLABLE_ENUM, value: (r) => r.doc.paymentMethod },
  totalAmount: { kind: 'number', operators: NUMBER, value: (r) => r.doc.totalAmount },
  // Channels include connector names, an open set: compared as text, not as a closed enum.
  channel: { kind: 'text', operators: ENUM, value: (r) => r.doc.channel },
  sourceId: { kind: 'text', operators: SOURCE_ID, caseSensitive: true, value: (r) => r.doc.sourceId },
};

/** Oldest issue date first, then number, then id: stable for historical cursors. */
const byIssueDate = (a: DocumentRow, b: DocumentRow) =>
  compareStrings(dayKey(a.doc.issuedDate), dayKey(b.doc.issuedDate)) ||
  compareStrings(a.doc.createdAt, b.doc.createdAt) ||
  compareStrings(a.doc.id, b.doc.id);

export const INVOICE_LIST: ListDefinition<DocumentRow> = {
  endpoint: '/invoices',
  filters: {
    ...COMMON_FILTERS,
    status: { kind: 'enum', operators: ENUM, enumValues: INVOICE_STATUSES, value: (r) => r.status },
    dueDate: { kind: 'date', operators: DATE, value: (r) => (r.doc.dueDate ? dayKey(r.doc.dueDate) : null) },
    paymentSchedule: { kind: 'boolean', operators: BOOLEAN, value: (r) => r.doc.paymentSchedule },
    remainingBalance: { kind: 'number', operators: NUMBER, value: (r) => r.remaining },
  },
  defaultOrder: byIssueDate,
  historical: true,
};

export const CREDIT_NOTE_LIST: ListDefinition<DocumentRow> = {
  endpoint: '/credit-notes',
  filters: {
    ...COMMON_FILTERS,
    status: { kind: 'enum', operators: ENUM, enumValues: CREDIT_NOTE_STATUSES, value: (r) => r.status },
    issuedDate: { kind: 'date', operators: DATE, value: (r) => dayKey(r.doc.issuedDate) },
    remainingAmount: { kind: 'number', operators: NUMBER, value: (r) => r.remaining },
  },
  defaultOrder: byIssueDate,
  historical: true,
};

function registerKind(
  app: FastifyInstance,
  deps: SandboxDeps,
  spec: KindSpec,
  def: ListDefinition<DocumentRow>,
): void {
  const { store } = deps;
  app.get(spec.path, requires(ACCOUNTS_READ), async (request) => {
    const organizationId = organizationIdParam(request.query);
    store.organizationFor(organizationId, authOf(request).userId);
    const today = store.clock.now();
    const rows = [...store.documents.values()]
      .filter((doc) => doc.kind === spec.kind && doc.organizationId === organizationId)
      .map(
        (doc): DocumentRow => ({
          doc,
          accountName: store.accounts.get(doc.accountId)?.fullName ?? '',
          status: doc.kind === 'invoice' ? invoiceStatus(doc, today) : creditNoteStatus(doc),
          remaining: remainingBalance(doc),
          tags: tagKeys(store, doc.tagIds),
        }),
      );
    return listPage(def, rows, request.query as ListQuery, (row) => documentJson(store, row.doc, today));
  });

  app.get(`${spec.path}/:documentId`, requires(ACCOUNTS_READ), async (request) => {
    const { documentId } = request.params as { documentId: string };
    const doc = documentFor(store, spec, documentId, authOf(request).userId);
    return documentJson(store, doc, store.clock.now());
  });
}

export function registerDocumentListRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  registerKind(app, deps, INVOICE, INVOICE_LIST);
  registerKind(app, deps, CREDIT_NOTE, CREDIT_NOTE_LIST);
}
