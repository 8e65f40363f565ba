/** How invoices and credit notes are rendered as JSON by the Public API. */

import type { Address, DateParts, DocumentRecord } from '../model.js';
import type { SandboxStore } from '../store.js';
import { type TagJson, tagsJson } from './account-view.js';
import { creditNoteStatus, invoiceStatus, remainingBalance } from './derived.js';

/** Fields shared by both kinds of document. */
interface DocumentJsonBase {
  id: string;
  organizationId: string;
  accountId: string;
  /** Null when the account was deleted meanwhile (the document then is gone too) or is unknown. */
  accountName: string | null;
  number: string;
  issuedDate: DateParts;
  totalAmount: string;
  taxAmount: string;
  /** Paid (invoice) or allocated (credit note) so far. */
  paidAmount: string;
  billingAddress: Address;
  file: { mimeType: string; size: number } | null;
  sourceId: string | null;
  channel: string;
  connectionId: string | null;
  readOnlyReason: string | null;
  paymentMethod: string | null;
  tags: TagJson[];
  createdAt: string;
  updatedAt: string;
}

export interface InvoiceJson extends DocumentJsonBase {
  dueDate: DateParts | null;
  remainingBalance: string;
  status: string;
  paymentSchedule: boolean;
}

export interface CreditNoteJson extends DocumentJsonBase {
  remainingAmount: string;
  status: string;
}

function baseJson(store: SandboxStore, doc: DocumentRecord): DocumentJsonBase {
  return {
    id: doc.id,
    organizationId: doc.organizationId,
    accountId: doc.accountId,
    accountName: store.accounts.get(doc.accountId)?.fullName ?? null,
    number: doc.number,
    issuedDate: { ...doc.issuedDate },
    totalAmount: doc.totalAmount,
    taxAmount: doc.taxAmount,
    paidAmount: doc.paidAmount,
    billingAddress: { ...doc.billingAddress },
    file: doc.file ? { mimeType: doc.file.mimeType, size: doc.file.bytes.length } : null,
    sourceId: doc.sourceId,
    channel: doc.channel,
    connectionId: doc.connectionId,
    readOnlyReason: doc.readOnlyReason,
    paymentMethod: doc.paymentMethod,
    tags: tagsJson(store, doc.tagIds),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

export function invoiceJson(store: SandboxStore, doc: DocumentRecord, today: Date): InvoiceJson {
  return {
    ...baseJson(store, doc),
    dueDate: doc.dueDate ? { ...doc.dueDate } : null,
    remainingBalance: remainingBalance(doc),
    status: invoiceStatus(doc, today),
    paymentSchedule: doc.paymentSchedule,
  };
}

export function creditNoteJson(store: SandboxStore, doc: DocumentRecord): CreditNoteJson {
  return {
    ...baseJson(store, doc),
    remainingAmount: remainingBalance(doc),
    status: creditNoteStatus(doc),
  };
}

/** Either kind, by the record's own kind. */
export const documentJson = (store: SandboxStore, doc: DocumentRecord, today: Date) =>
  doc.kind === 'invoice' ? invoiceJson(store, doc, today) : creditNoteJson(store, doc);
