/**
 * An invoices export as a German ERP writes it, for the CSV source's benchmark of other formats:
 * the file (Windows-1252 bytes, `;` between fields, CRLF line ends, German headers, amounts with a
 * decimal comma and thousands grouped by a dot, dates as dd.MM.yyyy), the source settings that
 * read it (`files`, `format`, `columns`), and the contract values its first rows should give.
 *
 *   npx tsx bench/german-invoices.ts <rows> <out.csv>
 *
 * Deterministic (the fixed-seed generator of generate-csv.ts): the same row count always gives the
 * same bytes. Every row is valid. Customer names carry ä ö ü ß é (one byte each in Windows-1252),
 * a few are quoted because they hold a `;`; issue dates span 365 days and due dates follow by 14 or
 * 30 days (about 400 distinct dates in all); a third of the invoices are paid, a sixth half paid.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { sourceSchema } from '../src/config/schema.js';
import type { DateParts, SourceRecord } from '../src/domain/records.js';
import type { CsvSourceConfig } from '../src/sources/csv/csv-source.js';
import { lcg, pad } from './generate-csv.js';

export const GERMAN_INVOICE_HEADER = [
  'Rechnungsnummer',
  'Kundennummer',
  'Kundenname',
  'Rechnungsdatum',
  'Fällig am',
  'Netto',
  'USt',
  'Brutto',
  'Bezahlt',
];

/** Names as the ERP quotes them: those with a `;` in quotes. Latin-1 only (one byte each in Windows-1252). */
const CUSTOMERS = [
  'Müller & Söhne GmbH',
  'Bäckerei Groß KG',
  'Café Élysée',
  'Schröder Maschinenbau AG',
  'Günther Weiß e.K.',
  'Straßenbau Köhler GmbH',
  '"Jürgens; Öl & Gas OHG"',
  'Zahnarztpraxis Dr. Bäumer',
  'Hôtel Zürichsee',
  'Fußpflege Schäfer',
  '"Krämer; Löwe Partnerschaft"',
  'Großhandel Düsseldorf GmbH',
];
const FIRST_DAY = Date.UTC(2025, 9, 1);
const DAY_MS = 86_400_000;

/** One calendar day as the file writes it and as the contract reads it. */
interface Day {
  german: string;
  parts: DateParts;
}
const dayAt = (offset: number): Day => {
  const date = new Date(FIRST_DAY + offset * DAY_MS);
  const parts = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
  return { german: `${pad(parts.day, 2)}.${pad(parts.month, 2)}.${parts.year}`, parts };
};
/** Every day a row may name, made once: 365 issue days, due dates up to 30 days after the last. */
const DAYS: readonly Day[] = Array.from({ length: 365 + 30 }, (_, offset) => dayAt(offset));

/** `144000` cents -> `1.440,00` (the file) and `1440.00` (the contract). */
const germanAmount = (cents: number): string =>
  `${Math.floor(cents / 100)
    .toString()
    .replace(/\B(?=(\d{3})+$)/g, '.')},${pad(cents % 100, 2)}`;
const plain = (cents: number): string => `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`;

/** The contract values a row should give (the columns the source settings below map). */
export interface ExpectedInvoice {
  sourceId: string;
  accountSourceId: string;
  issuedDate: DateParts;
  dueDate: DateParts;
  totalAmount: string;
  taxAmount: string;
  paidAmount: string;
}

/** Invoice `i` (1-based): its line (text, without the line end) and the values it should give. */
export function germanInvoiceRow(i: number, next: () => number): { line: string; expected: ExpectedInvoice } {
  // The generator's high bits: its low ones repeat with a short period (the lowest alternates).
  const draw = (n: number): number => (next() >>> 8) % n;
  const issued = draw(365);
  const due = issued + (draw(2) === 0 ? 14 : 30);
  const netCents = 1000 + draw(10_000_000);
  const taxCents = Math.round((netCents * (draw(4) === 0 ? 7 : 19)) / 100);
  const grossCents = netCents + taxCents;
  const paying = draw(6);
  const paidCents = paying < 2 ? grossCents : paying === 2 ? Math.floor(grossCents / 2) : 0;
  const number = `RE-2026-${pad(i, 7)}`;
  const customer = 10_000 + draw(5000);
  const line = [
    number,
    String(customer),
    CUSTOMERS[customer % CUSTOMERS.length]!,
    DAYS[issued]!.german,
    DAYS[due]!.german,
    germanAmount(netCents),
    germanAmount(taxCents),
    germanAmount(grossCents),
    germanAmount(paidCents),
  ].join(';');
  return {
    line,
    expected: {
      sourceId: number,
      accountSourceId: String(customer),
      issuedDate: DAYS[issued]!.parts,
      dueDate: DAYS[due]!.parts,
      totalAmount: plain(grossCents),
      taxAmount: plain(taxCents),
      paidAmount: plain(paidCents),
    },
  };
}

const SEED = 20260119;

/** The values the first `count` rows of any generated file should give, in order. */
export function expectedGermanInvoices(count: number): ExpectedInvoice[] {
  const next = lcg(SEED);
  return Array.from({ length: count }, (_, i) => germanInvoiceRow(i + 1, next).expected);
}

/** Writes `rows` invoice rows (plus the header) to `out` in Windows-1252, CRLF after each line. */
export async function generateGermanInvoicesCsv(rows: number, out: string): Promise<void> {
  const stream = createWriteStream(out);
  const next = lcg(SEED);
  // Every character written is Latin-1, whose bytes Windows-1252 reads the same: `latin1` encodes it.
  const write = async (text: string) => {
    if (!stream.write(Buffer.from(text, 'latin1'))) await once(stream, 'drain');
  };
  let chunk = `${GERMAN_INVOICE_HEADER.join(';')}\r\n`;
  for (let i = 1; i <= rows; i++) {
    chunk += `${germanInvoiceRow(i, next).line}\r\n`;
    if (chunk.length >= 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  stream.end(Buffer.from(chunk, 'latin1'));
  await once(stream, 'finish');
}

/**
 * The `type: csv` source that reads these files, as a configuration file would give it (parsed by
 * the configuration's schema, so its defaults are filled in).
 */
export function germanSourceConfig(dropDir: string): CsvSourceConfig {
  const config = sourceSchema.parse({
    id: 'bench-german',
    type: 'csv',
    dropDir,
    files: { invoices: ['Rechnungen*.csv'] },
    format: {
      encoding: 'windows-1252',
      delimiter: ';',
      decimalSeparator: ',',
      thousandsSeparator: '.',
      dateFormat: 'dd.MM.yyyy',
    },
    columns: {
      invoices: {
        sourceId: 'Rechnungsnummer',
        number: 'Rechnungsnummer',
        accountSourceId: 'Kundennummer',
        issuedDate: 'Rechnungsdatum',
        dueDate: 'Fällig am',
        totalAmount: 'Brutto',
        taxAmount: 'USt',
        paidAmount: 'Bezahlt',
      },
    },
  });
  if (config.type !== 'csv') throw new Error('the German source settings did not parse as a csv source');
  return config;
}

/** Records compared with the values their rows were generated with, and the first few that differ. */
export interface SampleCheck {
  compared: number;
  mismatches: string[];
}

/** The first records a source read from a generated file, against the values the generator wrote. */
export function compareWithGenerated(records: readonly SourceRecord[]): SampleCheck {
  const expected = expectedGermanInvoices(records.length);
  const mismatches: string[] = [];
  for (const [i, record] of records.entries()) {
    const want = expected[i]!;
    const got =
      record.kind === 'invoice'
        ? {
            sourceId: record.sourceId,
            accountSourceId: record.accountSourceId,
            issuedDate: record.issuedDate,
            dueDate: record.dueDate,
            totalAmount: record.totalAmount,
            taxAmount: record.taxAmount,
            paidAmount: record.paidAmount,
          }
        : record;
    if (!isDeepStrictEqual(got, want) && mismatches.length < 3)
      mismatches.push(`record ${i + 1}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
  }
  return { compared: records.length, mismatches };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [rowsArg, out] = process.argv.slice(2);
  const rows = Number(rowsArg);
  if (!Number.isInteger(rows) || rows < 0 || !out) {
    console.error('usage: tsx bench/german-invoices.ts <rows> <out.csv>');
    process.exit(1);
  }
  await generateGermanInvoicesCsv(rows, out);
  console.log(JSON.stringify({ rows, out }));
}
