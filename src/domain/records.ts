/**
 * Records as a source emits them, after validation: the CSV contract's columns, typed.
 * Money stays a decimal string; document dates are year/month/day parts.
 */

export interface DateParts {
  year: number;
  month: number;
  day: number;
}

/** `YYYY-MM-DD`, the contract's text of a document date (the year on four digits). */
export const isoDateOf = (date: DateParts): string =>
  `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;

export interface Address {
  street: string | null;
  city: string | null;
  postalCode: string | null;
  country: string | null;
}

export type RecordKind = 'account' | 'invoice' | 'creditNote';
export const RECORD_KINDS: readonly RecordKind[] = ['account', 'invoice', 'creditNote'];
export type Stream = 'accounts' | 'invoices' | 'creditNotes';

export const STREAM_OF: Readonly<Record<RecordKind, Stream>> = {
  account: 'accounts',
  invoice: 'invoices',
  creditNote: 'creditNotes',
};

/** The record kind of each stream: `STREAM_OF` read the other way. */
export const KIND_OF_STREAM: Readonly<Record<Stream, RecordKind>> = {
  accounts: 'account',
  invoices: 'invoice',
  creditNotes: 'creditNote',
};

/** What a kind is called in words: one record, several. */
export const KIND_NOUNS: Readonly<Record<RecordKind, readonly [string, string]>> = {
  account: ['account', 'accounts'],
  invoice: ['invoice', 'invoices'],
  creditNote: ['credit note', 'credit notes'],
};

/** A kind in words, for `n` records (default one): `credit note`, `credit notes`. */
export const kindNoun = (kind: RecordKind, n = 1): string => KIND_NOUNS[kind][n === 1 ? 0 : 1];

/** A stream in words, for `n` records (default several): `credit notes`, `credit note`. */
export const streamNoun = (stream: Stream, n = 2): string => kindNoun(KIND_OF_STREAM[stream], n);

/** Streams in the order a pass handles them: accounts before the documents that need them. */
export const STREAM_ORDER: readonly Stream[] = ['accounts', 'invoices', 'creditNotes'];

export interface AccountRecord {
  kind: 'account';
  sourceId: string;
  fullName: string;
  currencyCode: string;
  billingAddress: Address;
  /** Tag names. */
  tags: string[];
  updatedAt: string | null;
  /** Set by sources that track deletions (SQL tombstones): unlink the account's source. */
  deleted?: boolean;
}

export interface InvoiceRecord {
  kind: 'invoice';
  sourceId: string;
  accountSourceId: string;
  number: string;
  issuedDate: DateParts;
  dueDate: DateParts;
  totalAmount: string;
  taxAmount: string;
  /** null = the account's address. */
  billingAddress: Address | null;
  /** Absolute path of a PDF checked by the source; null = render one from the row. */
  file: string | null;
  paidAmount: string | null;
  /**
   * True when the source does not give the paid amount at all (a CSV file without the column, a
   * misspelt header): the service's paid amount is then left as it is, never reset to zero.
   */
  paidAmountUnknown?: boolean;
  updatedAt: string | null;
}

export interface CreditNoteRecord {
  kind: 'creditNote';
  sourceId: string;
  accountSourceId: string;
  number: string;
  issuedDate: DateParts;
  totalAmount: string;
  taxAmount: string;
  file: string | null;
  updatedAt: string | null;
}

export type SourceRecord = AccountRecord | InvoiceRecord | CreditNoteRecord;

/** Where a record came from, for error reports (a CSV file and line, a SQL row id...). */
export interface RecordOrigin {
  file?: string;
  line?: number;
}

/** A row a source refused: it never reaches the API, and it is recorded as a failure. */
export interface RowProblem {
  kind: RecordKind;
  /** The row's sourceId when it could be read, else a synthetic key like `file.csv:12`. */
  sourceKey: string;
  file?: string;
  line?: number;
  column?: string;
  reason: string;
  /** The raw row, kept so the failure can be retried once the data is fixed. */
  raw?: Record<string, string>;
}

/** A stream's cursor: opaque JSON only its source understands (Singer's "state"), or null once reset. */
export type CursorValue = Record<string, unknown>;
