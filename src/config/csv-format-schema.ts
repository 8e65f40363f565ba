import { z } from 'zod';
import { dateFns } from '../domain/date-patterns.js';
import type { Stream } from '../domain/records.js';
import { CONTRACT_COLUMNS, EXTRA_COLUMNS } from '../records/columns.js';

/**
 * The keys of a `type: csv` source that say how its files are written and how their rows read
 * (contract, third version): `files`, `format` / `formats`, `columns`, and `rows` (the row shapes
 * real exports have). Each is optional; without them a file is in the contract's own format.
 *
 * @example
 *   files: { invoices: ["Rechnungen*.csv"], accounts: "Kunden*.csv" }
 *   format: { encoding: windows-1252, delimiter: ";", decimalSeparator: ",", thousandsSeparator: ".", dateFormat: dd.MM.yyyy }
 *   columns:
 *     invoices: { sourceId: Rechnungsnummer, number: Rechnungsnummer, totalAmount: Brutto, currencyCode: { value: EUR } }
 *   rows:
 *     invoices: { negativeIsCreditNote: true, skip: [{ column: Rechnungsnummer, matches: "^Summe" }] }
 */

const ENCODING_ALIASES: Readonly<Record<string, string>> = {
  utf8: 'utf-8',
  'utf-8-sig': 'utf-8',
  cp1252: 'windows-1252',
  'win-1252': 'windows-1252',
  latin1: 'iso-8859-1',
  'latin-1': 'iso-8859-1',
  latin9: 'iso-8859-15',
  utf16le: 'utf-16le',
  utf16be: 'utf-16be',
};
export const ENCODINGS = [
  'utf-8',
  'windows-1252',
  'iso-8859-1',
  'iso-8859-15',
  'utf-16le',
  'utf-16be',
  'auto',
] as const;
export type CsvEncoding = (typeof ENCODINGS)[number];

const encoding = z.preprocess(
  (value) =>
    typeof value === 'string'
      ? (ENCODING_ALIASES[value.trim().toLowerCase()] ?? value.trim().toLowerCase())
      : value,
  z.enum(ENCODINGS, { error: `one of ${ENCODINGS.join(', ')}` }),
);

export const DELIMITERS = [',', ';', '\t', '|', 'auto'] as const;
const delimiter = z.preprocess(
  (value) => (value === 'tab' || value === '\\t' ? '\t' : value),
  z.enum(DELIMITERS, { error: 'one of ",", ";", "\\t" (or tab), "|", auto' }),
);

const thousandsSeparator = z
  .enum(['none', ',', '.', ' ', "'"], { error: `one of none, ",", ".", " ", "'"` })
  .transform((v) => (v === 'none' ? '' : v) as '' | ',' | '.' | ' ' | "'");

const dateFormat = z
  .string()
  .trim()
  .min(1, 'a date pattern like dd.MM.yyyy')
  .refine((pattern) => !/[DY]/.test(pattern.replace(/'[^']*'/g, '')), {
    message:
      'write the day as dd and the year as yyyy (in Unicode patterns DD is the day of the year and YYYY the week-numbering year), like dd.MM.yyyy',
  })
  .refine((pattern) => {
    try {
      dateFns().format(new Date(2026, 0, 19), pattern);
      return /y/.test(pattern) && /M|L/.test(pattern) && /d/.test(pattern);
    } catch {
      return false;
    }
  }, 'not a date pattern with a year, a month and a day (Unicode tokens: yyyy, MM, dd, like dd.MM.yyyy or M/d/yyyy)');

const formatFields = {
  encoding: encoding.optional(),
  delimiter: delimiter.optional(),
  decimalSeparator: z.enum(['.', ','], { error: 'one of ".", ","' }).optional(),
  thousandsSeparator: thousandsSeparator.optional(),
  dateFormat: dateFormat.optional(),
  headerLine: z.number().int().min(1, 'a line number, 1 or more').optional(),
};
const csvFormat = z.strictObject(formatFields);
export type CsvFormatSettings = z.output<typeof csvFormat>;

const perKind = <T extends z.ZodType>(schema: T) =>
  z
    .strictObject({
      accounts: schema.optional(),
      invoices: schema.optional(),
      creditNotes: schema.optional(),
    })
    .optional();

const pattern = z.string().trim().min(1, 'a file name pattern like "Kunden*.csv"');
const patterns = z.union([pattern.transform((p) => [p]), z.array(pattern).min(1)]);

/**
 * Where a contract column's value comes from: a header of the file, several headers joined with
 * ", " (address lines), a constant, the first header of a list with a value, or a header whose
 * values are translated (`map`).
 */
const columnSource = z.union([
  z.string().trim().min(1, 'a header of the file'),
  z.array(z.string().trim().min(1)).min(1, 'one header or more'),
  z.strictObject({ value: z.string() }),
  /** The first of these headers whose value is not empty (a due date, else the issue date). */
  z.strictObject({ first: z.array(z.string().trim().min(1)).min(1) }),
  z.strictObject({ header: z.string().trim().min(1), map: z.record(z.string(), z.string()) }),
]);
export type ColumnSourceSetting = z.output<typeof columnSource>;

const columnsOf = (stream: Stream) =>
  z.record(z.string(), columnSource).superRefine((columns, ctx) => {
    const known = [...CONTRACT_COLUMNS[stream].map((c) => c.name), ...EXTRA_COLUMNS[stream]];
    for (const name of Object.keys(columns))
      if (!known.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `not a column of ${stream} (known: ${known.join(', ')})`,
        });
  });

const regex = z
  .string()
  .min(1)
  .refine((source) => {
    try {
      new RegExp(source, 'iu');
      return true;
    } catch {
      return false;
    }
  }, 'not a regular expression');

/** A row to skip: the value of a header matches, equals, or is empty. */
const skipRule = z
  .strictObject({
    column: z.string().trim().min(1, 'a header of the file'),
    matches: regex.optional(),
    equals: z.string().optional(),
    empty: z.literal(true).optional(),
  })
  .refine((rule) => [rule.matches, rule.equals, rule.empty].filter((v) => v !== undefined).length === 1, {
    message: 'give one of matches, equals, empty',
  });
export type SkipRule = z.output<typeof skipRule>;

const minorUnits = z
  .union([z.boolean(), z.number().int().min(0).max(4)])
  .transform((v) => (v === true ? 2 : v === false ? null : v));

const rowsFields = {
  /** Rows that are no records (report totals, footers): skipped and counted, never failed. */
  skip: z.array(skipRule).optional(),
  /** Amounts are integers in minor units: `true` (cents) or the number of decimals. */
  minorUnits: minorUnits.optional(),
};

const AMOUNT_COLUMNS = ['totalAmount', 'taxAmount', 'paidAmount', 'openAmount'] as const;
const oneOrMore = z.union([z.string().transform((v) => [v]), z.array(z.string()).min(1)]);

const documentRows = z.strictObject({
  ...rowsFields,
  /**
   * Rows with the same sourceId are one document (line items, payments): `true` takes every value
   * from its first row; `{ sum: [taxAmount, paidAmount] }` adds those up over its rows.
   */
  group: z
    .union([z.literal(true), z.strictObject({ sum: z.array(z.enum(AMOUNT_COLUMNS)).min(1) })])
    .transform((g) => ({ sum: g === true ? [] : g.sum }))
    .optional(),
  /** A header whose value says each row's kind; rows with another value are skipped and counted. */
  kindFrom: z
    .strictObject({
      column: z.string().trim().min(1),
      invoices: oneOrMore.optional(),
      creditNotes: oneOrMore.optional(),
    })
    .refine((k) => k.invoices !== undefined || k.creditNotes !== undefined, {
      message: 'list the values of invoices, creditNotes or both',
    })
    .optional(),
  /** A document whose total is negative is a credit note (its amounts made positive). */
  negativeIsCreditNote: z.boolean().optional(),
  /** The rows also name their account: accounts are read from them (`columns.accounts`). */
  deriveAccounts: z.boolean().optional(),
});
export type DocumentRowsSettings = z.output<typeof documentRows>;

export const CSV_FORMAT_FIELDS = {
  /** Which files hold which kind: glob patterns, case-insensitive. */
  files: perKind(patterns),
  format: csvFormat.optional(),
  /** Per kind, over `format`. */
  formats: perKind(csvFormat),
  columns: z
    .strictObject({
      accounts: columnsOf('accounts').optional(),
      invoices: columnsOf('invoices').optional(),
      creditNotes: columnsOf('creditNotes').optional(),
    })
    .optional(),
  rows: z
    .strictObject({
      accounts: z.strictObject(rowsFields).optional(),
      invoices: documentRows.optional(),
      creditNotes: documentRows.optional(),
    })
    .optional(),
};
