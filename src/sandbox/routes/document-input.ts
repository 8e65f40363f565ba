/**
 * The multipart creation form of invoices and credit notes (spec, `POST /invoices`):
 * `accountId`, `number`, `issuedDate.year/month/day`, `dueDate.year/month/day` (invoices only),
 * `totalAmount`, `taxAmount`, `billingAddress.street/city/postalCode/country` (each defaults to the
 * account's), `file` (PDF, checked by its `%PDF-` signature), optional `sourceId`.
 */

import { compareDecimal } from '../../domain/decimal.js';
import { badRequest } from '../errors.js';
import type { Account, Address, DateParts, DocumentKind, StoredFile } from '../model.js';
import {
  amountInput,
  countryInput,
  datePartsInput,
  type Fields,
  MAX_TEXT_LENGTH,
  objectBody,
  optionalText,
  rejectUnknownFields,
  requiredText,
} from '../resources/input.js';

/** What differs between the two kinds of document. */
export interface KindSpec {
  kind: DocumentKind;
  /** Singular, for messages: `Invoice`, `Credit note`. */
  label: string;
  /** Audit action suffix: `Invoice`, `CreditNote`. */
  action: string;
  path: '/invoices' | '/credit-notes';
  /** Prefix of the kind's error codes: `app-invoicing.invoice`, `app-invoicing.credit-note`. */
  codePrefix: string;
  hasDueDate: boolean;
  fileRequired: boolean;
}

export const INVOICE: KindSpec = {
  kind: 'invoice',
  label: 'Invoice',
  action: 'Invoice',
  path: '/invoices',
  codePrefix: 'app-invoicing.invoice',
  hasDueDate: true,
  fileRequired: true,
};

export const CREDIT_NOTE: KindSpec = {
  kind: 'creditNote',
  label: 'Credit note',
  action: 'CreditNote',
  path: '/credit-notes',
  codePrefix: 'app-invoicing.credit-note',
  hasDueDate: false,
  fileRequired: false,
};

/** A validated creation form; `accountId` still has to be resolved to a visible account. */
export interface DocumentForm {
  accountId: string;
  number: string;
  issuedDate: DateParts;
  dueDate: DateParts | null;
  totalAmount: string;
  taxAmount: string;
  /** Only the address parts that were sent; the others come from the account. */
  billingAddress: Partial<Address>;
  file: StoredFile | null;
  sourceId: string | null;
  /** Only where the server takes it at creation (`compat.createPaid`); null: not sent. */
  paidAmount: string | null;
}

const ADDRESS_PARTS = ['street', 'city', 'postalCode', 'country'] as const;
const dateFields = (name: string) => [`${name}.year`, `${name}.month`, `${name}.day`];

function formFields(spec: KindSpec): string[] {
  return [
    'accountId',
    'number',
    ...dateFields('issuedDate'),
    ...(spec.hasDueDate ? dateFields('dueDate') : []),
    'totalAmount',
    'taxAmount',
    ...ADDRESS_PARTS.map((part) => `billingAddress.${part}`),
    'file',
    'sourceId',
  ];
}

/** A text part of the form; a repeated part (sent twice) is refused rather than guessed. */
function textPart(fields: Fields, name: string): string | undefined {
  const value = fields[name];
  if (value === undefined) return undefined;
  if (Array.isArray(value)) throw badRequest(`${name} is sent more than once`);
  if (Buffer.isBuffer(value)) throw badRequest(`${name} must be a text field, not a file`);
  return String(value);
}

function datePartsOf(fields: Fields, name: string): DateParts {
  return datePartsInput(
    {
      year: textPart(fields, `${name}.year`),
      month: textPart(fields, `${name}.month`),
      day: textPart(fields, `${name}.day`),
    },
    name,
  );
}

const PDF_SIGNATURE = Buffer.from('%PDF-');

function fileOf(fields: Fields, spec: KindSpec): StoredFile | null {
  const value = fields.file;
  if (value === undefined) {
    if (spec.fileRequired) throw badRequest('file is required: the PDF of the document as a file part');
    return null;
  }
  if (Array.isArray(value)) throw badRequest('file is sent more than once');
  if (!Buffer.isBuffer(value)) throw badRequest('file must be a file part (PDF), not a text field');
  // The real signature decides, not the declared content type.
  if (!value.subarray(0, PDF_SIGNATURE.length).equals(PDF_SIGNATURE)) {
    throw badRequest('file must be a PDF (it does not start with the %PDF- signature)');
  }
  return { mimeType: 'application/pdf', bytes: value };
}

/** Only the address parts present in the form. */
function addressPartsOf(fields: Fields): Partial<Address> {
  const address: Partial<Address> = {};
  for (const part of ADDRESS_PARTS) {
    const raw = textPart(fields, `billingAddress.${part}`);
    if (raw === undefined) continue;
    const name = `billingAddress.${part}`;
    address[part] = part === 'country' ? countryInput(raw, name) : optionalText(raw, name);
  }
  return address;
}

/** The caller's id of the document: opaque and case-sensitive, so kept exactly; empty = none. */
function sourceIdOf(fields: Fields): string | null {
  const raw = textPart(fields, 'sourceId');
  if (raw === undefined || raw === '') return null;
  requiredText(raw, 'sourceId', MAX_TEXT_LENGTH);
  return raw;
}

/**
 * Validates a multipart creation body of `spec`'s kind. `paidField`: the field of the paid amount,
 * when the server takes one at creation (`compat.createPaid`); without it the field is unknown.
 */
export function documentForm(body: unknown, spec: KindSpec, paidField?: string): DocumentForm {
  const fields = objectBody(body, 'the multipart form');
  rejectUnknownFields(fields, paidField ? [...formFields(spec), paidField] : formFields(spec));
  const accountId = requiredText(textPart(fields, 'accountId'), 'accountId');
  const number = requiredText(textPart(fields, 'number'), 'number');
  const issuedDate = datePartsOf(fields, 'issuedDate');
  const dueDate = spec.hasDueDate ? datePartsOf(fields, 'dueDate') : null;
  const totalAmount = amountInput(textPart(fields, 'totalAmount'), 'totalAmount');
  const taxAmount = amountInput(textPart(fields, 'taxAmount'), 'taxAmount');
  if (compareDecimal(taxAmount, totalAmount) > 0) throw badRequest('taxAmount must not exceed totalAmount');
  const billingAddress = addressPartsOf(fields);
  const file = fileOf(fields, spec);
  const paidText = paidField ? textPart(fields, paidField) : undefined;
  const paidAmount = paidText === undefined ? null : amountInput(paidText, paidField!);
  if (paidAmount !== null && compareDecimal(paidAmount, totalAmount) > 0)
    throw badRequest(`${paidField} must be from 0 to the totalAmount ${totalAmount}, got ${paidAmount}`);
  return {
    paidAmount,
    accountId,
    number,
    issuedDate,
    dueDate,
    totalAmount,
    taxAmount,
    billingAddress,
    file,
    sourceId: sourceIdOf(fields),
  };
}

/** The document's address: each part sent in the form, else the account's. */
export const addressFor = (account: Account, parts: Partial<Address>): Address => ({
  ...account.billingAddress,
  ...parts,
});
