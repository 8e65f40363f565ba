import type { CreateCreditNoteInput } from '../api/types.js';
import { compareDecimal, normalizeDecimal } from '../domain/decimal.js';
import type { CreditNoteRecord, DateParts, InvoiceRecord } from '../domain/records.js';
import { contentHash, fingerprint } from './content-hash.js';

export type DocumentRecord = InvoiceRecord | CreditNoteRecord;

/** The creation input of a document, without its PDF (attached by the sender). */
export type DocumentCreateInput = Omit<CreateCreditNoteInput, 'file'> & { dueDate?: DateParts };

/**
 * `POST /invoices` / `POST /credit-notes`: dates as year/month/day parts, amounts as normalised
 * decimal strings; without an address on the row none is sent and the API takes the account's.
 */
export function documentCreateInput(record: DocumentRecord, accountId: string): DocumentCreateInput {
  return {
    accountId,
    number: record.number,
    issuedDate: record.issuedDate,
    ...(record.kind === 'invoice' ? { dueDate: record.dueDate } : {}),
    totalAmount: normalizeDecimal(record.totalAmount),
    taxAmount: normalizeDecimal(record.taxAmount),
    ...(record.kind === 'invoice' && record.billingAddress ? { billingAddress: record.billingAddress } : {}),
    sourceId: record.sourceId,
  };
}

/** What can still change after creation, through `PATCH /invoices/{id}`. */
export interface DocumentMutableState {
  /** null: the source does not say (see `InvoiceRecord.paidAmountUnknown`); the service's stays. */
  paidAmount: string | null;
  dueDate: DateParts | null;
}

export function mutableState(record: DocumentRecord): DocumentMutableState {
  if (record.kind !== 'invoice') return { paidAmount: '0.00', dueDate: null };
  const paidAmount = record.paidAmountUnknown ? null : normalizeDecimal(record.paidAmount ?? '0');
  return { paidAmount, dueDate: record.dueDate };
}

/** The fields frozen at creation; a change there cannot be applied and is reported. */
export function immutableHash(record: DocumentRecord): string {
  return contentHash({
    accountSourceId: record.accountSourceId,
    number: record.number,
    issuedDate: record.issuedDate,
    totalAmount: normalizeDecimal(record.totalAmount),
    taxAmount: normalizeDecimal(record.taxAmount),
    billingAddress: record.kind === 'invoice' ? record.billingAddress : null,
    file: record.file,
  });
}

/** What decides "changed": every field sent at creation and the ones a PATCH can change. */
export function documentHash(record: DocumentRecord): string {
  const mutable = mutableState(record);
  const a = record.kind === 'invoice' ? record.billingAddress : null;
  return fingerprint([
    record.kind,
    record.sourceId,
    record.accountSourceId,
    record.number,
    dateParts(record.issuedDate),
    dateParts(mutable.dueDate),
    normalizeDecimal(record.totalAmount),
    normalizeDecimal(record.taxAmount),
    a ? [a.street ?? null, a.city ?? null, a.postalCode ?? null, a.country ?? null] : null,
    record.file ?? null,
    mutable.paidAmount,
  ]);
}

const dateParts = (date: DateParts | null): number[] | null => date && [date.year, date.month, date.day];

/** The PATCH body that brings `current` to `wanted`, or null when nothing differs. */
export function documentPatch(
  current: Partial<DocumentMutableState>,
  wanted: DocumentMutableState,
): { paidAmount?: string; dueDate?: DateParts } | null {
  const patch: { paidAmount?: string; dueDate?: DateParts } = {};
  // A document is created with nothing paid, so an unknown current amount counts as zero; an amount
  // the source does not give is never sent (it would reset what the service holds).
  if (wanted.paidAmount !== null && compareDecimal(current.paidAmount ?? '0', wanted.paidAmount) !== 0)
    patch.paidAmount = wanted.paidAmount;
  const a = current.dueDate;
  const b = wanted.dueDate;
  if (b && (!a || a.year !== b.year || a.month !== b.month || a.day !== b.day)) patch.dueDate = b;
  return Object.keys(patch).length > 0 ? patch : null;
}
