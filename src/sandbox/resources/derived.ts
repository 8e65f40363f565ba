/**
 * Values the sandbox derives from stored records instead of storing them: document balances and
 * statuses, account balances and collection status. Shared by the account, document, aging
 * balance, dunning and financial overview routes, so every endpoint tells the same story.
 *
 * "Today" is the UTC day of the sandbox clock; document dates are calendar days without a zone.
 */

import { type Decimal, formatDecimal, parseDecimal } from '../../domain/decimal.js';
import type { Account, DateParts, DocumentRecord } from '../model.js';
import type { SandboxStore } from '../store.js';

export type InvoiceStatus = 'Issued' | 'Overdue' | 'Paid';
export type CreditNoteStatus = 'Unallocated' | 'PartiallyAllocated' | 'Allocated';
export type CollectionStatus = 'Open' | 'Settled' | 'WrittenOff' | 'NoInvoice';

export const INVOICE_STATUSES: readonly InvoiceStatus[] = ['Issued', 'Overdue', 'Paid'];
export const CREDIT_NOTE_STATUSES: readonly CreditNoteStatus[] = [
  'Unallocated',
  'PartiallyAllocated',
  'Allocated',
];
export const COLLECTION_STATUSES: readonly CollectionStatus[] = [
  'Open',
  'Settled',
  'WrittenOff',
  'NoInvoice',
];

/** Balances of one account, amounts as decimal strings. */
export interface AccountBalances {
  /** Invoices' remaining balances minus the unallocated amounts of credit notes (net outstanding). */
  remainingBalance: string;
  /** Remaining balances of the overdue invoices. */
  overdueBalance: string;
  overdueInvoiceCount: number;
  /** Days since the due date of the oldest overdue invoice; 0 when nothing is overdue. */
  daysOverdue: number;
}

const MS_PER_DAY = 24 * 3600 * 1000;
const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** `YYYY-MM-DD` of date parts; sorts and compares as a string. */
export const dayKey = (date: DateParts): string =>
  `${pad(date.year, 4)}-${pad(date.month, 2)}-${pad(date.day, 2)}`;

/** The UTC day of an instant (`today` as the derived values understand it). */
export const todayKey = (now: Date): string => now.toISOString().slice(0, 10);

/** Whole days from `from` to `to` (both `YYYY-MM-DD`). */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / MS_PER_DAY);

/** What remains to be paid (invoice) or allocated (credit note): total minus paid, never below 0. */
export function remainingUnits(doc: DocumentRecord): Decimal {
  const rest = parseDecimal(doc.totalAmount) - parseDecimal(doc.paidAmount);
  return rest > 0n ? rest : 0n;
}

/** `remainingBalance` of an invoice, `remainingAmount` of a credit note, as a decimal string. */
export const remainingBalance = (doc: DocumentRecord): string => formatDecimal(remainingUnits(doc));

/** True when the invoice is due before today and not fully paid. Credit notes are never overdue. */
export function isOverdue(doc: DocumentRecord, today: Date): boolean {
  if (doc.kind !== 'invoice' || doc.dueDate === null) return false;
  return remainingUnits(doc) > 0n && dayKey(doc.dueDate) < todayKey(today);
}

/** `Paid` when nothing remains, `Overdue` when the due date is past, else `Issued`. */
export function invoiceStatus(doc: DocumentRecord, today: Date): InvoiceStatus {
  if (remainingUnits(doc) === 0n) return 'Paid';
  return isOverdue(doc, today) ? 'Overdue' : 'Issued';
}

/** By allocated share: nothing, part, or all of the credit note's total. */
export function creditNoteStatus(doc: DocumentRecord): CreditNoteStatus {
  if (remainingUnits(doc) === 0n) return 'Allocated';
  return parseDecimal(doc.paidAmount) > 0n ? 'PartiallyAllocated' : 'Unallocated';
}

/** The status of either kind of document. */
export const documentStatus = (doc: DocumentRecord, today: Date): InvoiceStatus | CreditNoteStatus =>
  doc.kind === 'invoice' ? invoiceStatus(doc, today) : creditNoteStatus(doc);

/** The invoices and credit notes of one account. */
export const documentsOf = (store: SandboxStore, accountId: string): DocumentRecord[] =>
  store.documents.ofAccount(accountId);

/** Documents grouped by account id, for lists that derive values of many accounts at once. */
export function documentsByAccount(store: SandboxStore): Map<string, DocumentRecord[]> {
  const grouped = new Map<string, DocumentRecord[]>();
  for (const doc of store.documents.values()) {
    const list = grouped.get(doc.accountId);
    if (list) list.push(doc);
    else grouped.set(doc.accountId, [doc]);
  }
  return grouped;
}

/** Balances of an account from its documents (see `AccountBalances`). */
export function balancesOf(docs: readonly DocumentRecord[], today: Date): AccountBalances {
  let remaining = 0n;
  let overdue = 0n;
  let overdueInvoiceCount = 0;
  let oldestOverdue: string | null = null;
  for (const doc of docs) {
    const rest = remainingUnits(doc);
    remaining += doc.kind === 'invoice' ? rest : -rest;
    if (!isOverdue(doc, today) || doc.dueDate === null) continue;
    overdue += rest;
    overdueInvoiceCount += 1;
    const due = dayKey(doc.dueDate);
    if (oldestOverdue === null || due < oldestOverdue) oldestOverdue = due;
  }
  return {
    remainingBalance: formatDecimal(remaining),
    overdueBalance: formatDecimal(overdue),
    overdueInvoiceCount,
    daysOverdue: oldestOverdue === null ? 0 : daysBetween(oldestOverdue, todayKey(today)),
  };
}

/** Balances of one account (see `AccountBalances`). */
export const accountBalances = (store: SandboxStore, accountId: string, today: Date): AccountBalances =>
  balancesOf(documentsOf(store, accountId), today);

/**
 * A write-off is not part of the Public API; the admin seed marks one with `writtenOff: true`
 * on the account record (an extra field the seed route stores as given).
 */
export const isWrittenOff = (account: Account): boolean => account.writtenOff === true;

/**
 * `NoInvoice` without invoices, `WrittenOff` when written off, `Open` while an invoice has
 * something left to pay, else `Settled`.
 */
export function collectionStatusOf(account: Account, docs: readonly DocumentRecord[]): CollectionStatus {
  const invoices = docs.filter((d) => d.kind === 'invoice');
  if (invoices.length === 0) return 'NoInvoice';
  if (isWrittenOff(account)) return 'WrittenOff';
  return invoices.some((d) => remainingUnits(d) > 0n) ? 'Open' : 'Settled';
}

/**
 * Collection status of one account. `today` is accepted for symmetry with the other derived
 * values (the status does not depend on due dates).
 */
export function collectionStatus(store: SandboxStore, account: Account, today: Date): CollectionStatus {
  void today;
  return collectionStatusOf(account, documentsOf(store, account.id));
}
