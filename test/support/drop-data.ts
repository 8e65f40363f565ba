import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDF_BYTES } from './sandbox.js';

export const ACCOUNT_HEADER =
  'sourceId,fullName,currencyCode,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,tags,updatedAt';
export const INVOICE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,billingAddress.street,billingAddress.city,billingAddress.postalCode,billingAddress.country,file,paidAmount,updatedAt';
export const CREDIT_NOTE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount,file,updatedAt';

export const accountRow = (i: number, over: Partial<Record<'name' | 'city' | 'tags', string>> = {}) =>
  `C-${i},${over.name ?? `Customer ${i}`},EUR,${i} rue du Port,${over.city ?? 'Nantes'},44000,FR,${over.tags ?? ''},2026-01-0${(i % 9) + 1}T10:00:00Z`;

export const invoiceRow = (
  i: number,
  account: number,
  over: Partial<Record<'paid' | 'file' | 'total', string>> = {},
) =>
  `INV-${i},C-${account},F-${String(i).padStart(5, '0')},2026-01-10,2026-02-09,${over.total ?? '120.00'},20.00,,,,,${over.file ?? ''},${over.paid ?? ''},`;

export const creditNoteRow = (i: number, account: number) =>
  `CN-${i},C-${account},A-${String(i).padStart(5, '0')},2026-01-20,30.00,5.00,,`;

/** Writes a CSV file (header + rows) into the drop folder. */
export function dropCsv(dropDir: string, name: string, header: string, rows: readonly string[]): string {
  mkdirSync(dropDir, { recursive: true });
  const path = join(dropDir, name);
  writeFileSync(path, `${[header, ...rows].join('\n')}\n`);
  return path;
}

/** A PDF inside the drop folder, referenced by invoices' `file` column. */
export function dropPdf(dropDir: string, relativePath: string): void {
  const path = join(dropDir, relativePath);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, PDF_BYTES);
}

export const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);

/**
 * `accounts.csv` with `accounts` rows and `invoices.csv` with `invoices` rows spread over them
 * (`invoice` may change each invoice row, e.g. its paid amount).
 */
export function dropAccountsAndInvoices(
  dropDir: string,
  accounts: number,
  invoices: number,
  invoice: (i: number) => Partial<Record<'paid' | 'file' | 'total', string>> = () => ({}),
): void {
  dropCsv(
    dropDir,
    'accounts.csv',
    ACCOUNT_HEADER,
    range(1, accounts).map((i) => accountRow(i)),
  );
  dropCsv(
    dropDir,
    'invoices.csv',
    INVOICE_HEADER,
    range(1, invoices).map((i) => invoiceRow(i, (i % accounts) + 1, invoice(i))),
  );
}
