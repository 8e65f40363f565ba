import type { Stream } from '../domain/records.js';

/**
 * The record contract's columns per kind, the same for every source: a CSV file's header, a SQL
 * stream's result columns, a module's or a Singer tap's record fields all name these.
 */
export interface ColumnSpec {
  name: string;
  required: boolean;
}

const required = (name: string): ColumnSpec => ({ name, required: true });
const optional = (name: string): ColumnSpec => ({ name, required: false });

export const ADDRESS_COLUMNS = [
  'billingAddress.street',
  'billingAddress.city',
  'billingAddress.postalCode',
  'billingAddress.country',
] as const;

export const CONTRACT_COLUMNS: Readonly<Record<Stream, readonly ColumnSpec[]>> = {
  accounts: [
    required('sourceId'),
    required('fullName'),
    required('currencyCode'),
    ...ADDRESS_COLUMNS.map(optional),
    optional('tags'),
    optional('updatedAt'),
  ],
  invoices: [
    required('sourceId'),
    required('accountSourceId'),
    required('number'),
    required('issuedDate'),
    required('dueDate'),
    required('totalAmount'),
    required('taxAmount'),
    ...ADDRESS_COLUMNS.map(optional),
    optional('file'),
    optional('paidAmount'),
    optional('updatedAt'),
  ],
  creditNotes: [
    required('sourceId'),
    required('accountSourceId'),
    required('number'),
    required('issuedDate'),
    required('totalAmount'),
    required('taxAmount'),
    optional('file'),
    optional('updatedAt'),
  ],
};

/** The record kind of each stream (declared with the records, in domain/). */
export { KIND_OF_STREAM } from '../domain/records.js';

/**
 * Columns a source may give besides the contract's, from which a contract column is computed:
 * `openAmount`, what is still due on an invoice (`Open balance`, `Amount Due`), gives
 * `paidAmount` = `totalAmount` - `openAmount` when the paid amount itself is not given.
 */
export const EXTRA_COLUMNS: Readonly<Record<Stream, readonly string[]>> = {
  accounts: [],
  invoices: ['openAmount'],
  creditNotes: [],
};
