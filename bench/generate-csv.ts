/**
 * Writes a synthetic invoices CSV in the contract's columns, for benchmarks and load trials.
 *
 *   npx tsx bench/generate-csv.ts <rows> <out.csv>
 *
 * Deterministic (a fixed-seed generator): the same row count always gives the same bytes. Every row
 * is valid; about one in five carries a billing address (some quoted, with a comma), one in three a
 * paid amount, and `file` stays empty so the bench measures parsing, not PDF checks.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';

export const INVOICE_HEADER = [
  'sourceId',
  'accountSourceId',
  'number',
  'issuedDate',
  'dueDate',
  'totalAmount',
  'taxAmount',
  'billingAddress.street',
  'billingAddress.city',
  'billingAddress.postalCode',
  'billingAddress.country',
  'file',
  'paidAmount',
  'updatedAt',
];

const STREETS = ['"12, rue de la Paix"', '221B Baker Street', '"1, Infinite Loop"', 'Unter den Linden 77'];
const CITIES = [
  ['Paris', '75002', 'FR'],
  ['London', 'NW1 6XE', 'GB'],
  ['Cupertino', '95014', 'US'],
  ['Berlin', '10117', 'DE'],
] as const;

/** A small linear congruential generator: fast and reproducible, which is all a fixture needs. */
export function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

export const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The CSV line (without its newline) of invoice number `i` (1-based). */
export function invoiceLine(i: number, next: () => number): string {
  const issuedMonth = 1 + (next() % 12);
  const issuedDay = 1 + (next() % 28);
  const dueMonth = issuedMonth === 12 ? 12 : issuedMonth + 1;
  const totalCents = 1000 + (next() % 10_000_000);
  const taxCents = Math.floor(totalCents / 6);
  const total = `${Math.floor(totalCents / 100)}.${pad(totalCents % 100, 2)}`;
  const tax = `${Math.floor(taxCents / 100)}.${pad(taxCents % 100, 2)}`;
  const withAddress = next() % 5 === 0;
  const city = CITIES[next() % CITIES.length]!;
  const address = withAddress
    ? [STREETS[next() % STREETS.length]!, city[0], city[1], city[2]]
    : ['', '', '', ''];
  const paid = next() % 3 === 0 ? `${Math.floor(totalCents / 200)}.00` : '';
  return [
    `INV-${pad(i, 8)}`,
    `ACC-${pad(1 + (next() % 5000), 5)}`,
    `F2026-${pad(i, 8)}`,
    `2026-${pad(issuedMonth, 2)}-${pad(issuedDay, 2)}`,
    `2026-${pad(dueMonth, 2)}-${pad(issuedDay, 2)}`,
    total,
    tax,
    ...address,
    '',
    paid,
    `2026-${pad(issuedMonth, 2)}-${pad(issuedDay, 2)}T09:30:00Z`,
  ].join(',');
}

/** Writes `rows` invoice rows (plus the header) to `out`, awaiting the stream's back-pressure. */
export async function generateInvoicesCsv(rows: number, out: string): Promise<void> {
  const stream = createWriteStream(out);
  const next = lcg(20260115);
  let chunk = `${INVOICE_HEADER.join(',')}\n`;
  for (let i = 1; i <= rows; i++) {
    chunk += `${invoiceLine(i, next)}\n`;
    if (chunk.length >= 1 << 16) {
      if (!stream.write(chunk)) await once(stream, 'drain');
      chunk = '';
    }
  }
  stream.end(chunk);
  await once(stream, 'finish');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [rowsArg, out] = process.argv.slice(2);
  const rows = Number(rowsArg);
  if (!Number.isInteger(rows) || rows < 0 || !out) {
    console.error('usage: tsx bench/generate-csv.ts <rows> <out.csv>');
    process.exit(1);
  }
  await generateInvoicesCsv(rows, out);
  console.log(JSON.stringify({ rows, out }));
}
