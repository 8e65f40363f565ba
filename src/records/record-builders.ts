import type {
  AccountRecord,
  Address,
  CreditNoteRecord,
  InvoiceRecord,
  SourceRecord,
  Stream,
} from '../domain/records.js';
import { ADDRESS_COLUMNS } from './columns.js';
import {
  type Checked,
  checkAmount,
  checkCountry,
  checkCurrency,
  checkDate,
  checkTimestamp,
  compareAmounts,
  parseTags,
} from './field-validators.js';

/**
 * Builds typed records from CSV rows, collecting every problem of a row (not only the first) so
 * one report line tells the user all there is to fix. Pure: the `file` column's PDF is checked
 * afterwards by the unit (it needs the file system), so records carry its text as written.
 */

/** A row's values by contract column: trimmed, `''` when empty or when the column is absent. */
export interface RowView {
  get(column: string): string;
  /** Whether the row has the column at all (default: yes); an absent column is not an empty one. */
  has?(column: string): boolean;
  /**
   * Why the column's value could not be read in the source's own terms (`not a date in the form
   * dd.MM.yyyy`), when the view rewrote values into the contract's form and this one failed.
   */
  explain?(column: string): string | undefined;
}

export interface RowIssue {
  column: string;
  reason: string;
}

export type Built = { record: SourceRecord; issues: [] } | { record: null; issues: RowIssue[] };

class RowChecker {
  readonly issues: RowIssue[] = [];
  constructor(private readonly row: RowView) {}

  required(column: string): string {
    const value = this.row.get(column);
    if (value === '') this.issues.push({ column, reason: 'required value is empty' });
    return value;
  }

  /** Parses a required column; `null` when it is empty or invalid (the issue is recorded). */
  parsed<T>(column: string, check: (text: string) => Checked<T>): T | null {
    const text = this.required(column);
    return text === '' ? null : this.checked(column, text, check);
  }

  /** Parses an optional column; `null` when it is empty or invalid. */
  optional<T>(column: string, check: (text: string) => Checked<T>): T | null {
    const text = this.row.get(column);
    return text === '' ? null : this.checked(column, text, check);
  }

  text(column: string): string | null {
    const value = this.row.get(column);
    return value === '' ? null : value;
  }

  address(): Address {
    return {
      street: this.text('billingAddress.street'),
      city: this.text('billingAddress.city'),
      postalCode: this.text('billingAddress.postalCode'),
      country: this.optional('billingAddress.country', checkCountry),
    };
  }

  private checked<T>(column: string, text: string, check: (text: string) => Checked<T>): T | null {
    const result = check(text);
    if (result.ok) return result.value;
    this.issues.push({ column, reason: this.row.explain?.(column) ?? result.reason });
    return null;
  }
}

function hasAddress(row: RowView): boolean {
  for (const column of ADDRESS_COLUMNS) if (row.get(column) !== '') return true;
  return false;
}

const isEmptyAddress = (a: Address): boolean =>
  a.street === null && a.city === null && a.postalCode === null && a.country === null;

function checkPaid(checker: RowChecker, paid: string | null, total: string | null): void {
  if (paid === null) return;
  // Both passed `checkAmount`: plain decimals, compared by their digits.
  if (compareAmounts(paid, '0') < 0) {
    checker.issues.push({ column: 'paidAmount', reason: `cannot be negative: "${paid}"` });
  } else if (total !== null && compareAmounts(paid, total) > 0) {
    checker.issues.push({
      column: 'paidAmount',
      reason: `is more than totalAmount (${paid} > ${total})`,
    });
  }
}

function buildAccount(row: RowView): Built {
  const c = new RowChecker(row);
  const sourceId = c.required('sourceId');
  const fullName = c.required('fullName');
  const currencyCode = c.parsed('currencyCode', checkCurrency);
  const billingAddress = c.address();
  const tags = parseTags(row.get('tags'));
  const updatedAt = c.optional('updatedAt', checkTimestamp);
  if (c.issues.length > 0) return { record: null, issues: c.issues };
  const record: AccountRecord = {
    kind: 'account',
    sourceId,
    fullName,
    currencyCode: currencyCode!,
    billingAddress,
    tags,
    updatedAt,
  };
  return { record, issues: [] };
}

function buildInvoice(row: RowView): Built {
  const c = new RowChecker(row);
  const sourceId = c.required('sourceId');
  const accountSourceId = c.required('accountSourceId');
  const number = c.required('number');
  const issuedDate = c.parsed('issuedDate', checkDate);
  const dueDate = c.parsed('dueDate', checkDate);
  const totalAmount = c.parsed('totalAmount', checkAmount);
  const taxAmount = c.parsed('taxAmount', checkAmount);
  const paidAmount = c.optional('paidAmount', checkAmount);
  checkPaid(c, paidAmount, totalAmount);
  // Most rows have no address: its object is only made for one that has a part of it.
  const address = hasAddress(row) ? c.address() : null;
  const updatedAt = c.optional('updatedAt', checkTimestamp);
  // A due date before the issue date is unusual but it is the user's data: it is kept.
  if (c.issues.length > 0) return { record: null, issues: c.issues };
  const record: InvoiceRecord = {
    kind: 'invoice',
    sourceId,
    accountSourceId,
    number,
    issuedDate: issuedDate!,
    dueDate: dueDate!,
    totalAmount: totalAmount!,
    taxAmount: taxAmount!,
    billingAddress: address === null || isEmptyAddress(address) ? null : address,
    file: c.text('file'),
    paidAmount,
    ...(row.has?.('paidAmount') === false ? { paidAmountUnknown: true } : {}),
    updatedAt,
  };
  return { record, issues: [] };
}

function buildCreditNote(row: RowView): Built {
  const c = new RowChecker(row);
  const sourceId = c.required('sourceId');
  const accountSourceId = c.required('accountSourceId');
  const number = c.required('number');
  const issuedDate = c.parsed('issuedDate', checkDate);
  const totalAmount = c.parsed('totalAmount', checkAmount);
  const taxAmount = c.parsed('taxAmount', checkAmount);
  const updatedAt = c.optional('updatedAt', checkTimestamp);
  if (c.issues.length > 0) return { record: null, issues: c.issues };
  const record: CreditNoteRecord = {
    kind: 'creditNote',
    sourceId,
    accountSourceId,
    number,
    issuedDate: issuedDate!,
    totalAmount: totalAmount!,
    taxAmount: taxAmount!,
    file: c.text('file'),
    updatedAt,
  };
  return { record, issues: [] };
}

export const RECORD_BUILDERS: Readonly<Record<Stream, (row: RowView) => Built>> = {
  accounts: buildAccount,
  invoices: buildInvoice,
  creditNotes: buildCreditNote,
};
