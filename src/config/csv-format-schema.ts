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
 *
 * A file without a header (`format: { headerLine: none }`, Sage 50's exports) names its columns
 * by letter, as a spreadsheet shows them (`A`, `AD`), and values may be computed within a row:
 *   columns:
 *     invoices: { totalAmount: { sum: [H, J] }, dueDate: { date: E, plusDays: { accountColumn: AD } } }
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
  /** The header's line (the lines above it are skipped), or `none`: columns by letter (A, B, ...). */
  headerLine: z
    .union([z.number().int().min(1), z.literal('none')], {
      error: 'a line number (1 or more), or none (the file has no header: its columns are named A, B, ...)',
    })
    .optional(),
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
 * A column of the file: a header (exact, else any case); in a file without a header, its letter
 * as a spreadsheet shows it (`A`, `AD`); in either, a number is its position from 1.
 */
const columnRef = z.union([
  z.string().trim().min(1, 'a header of the file, or a column letter'),
  z.number().int().min(1, 'a column number, 1 or more'),
]);
export type ColumnRef = z.output<typeof columnRef>;

/**
 * Where a contract column's value comes from: a column of the file, several joined with ", "
 * (address lines), a constant, the first of a list with a value, a column whose values are
 * translated (`map`), the sum of several amounts of the row, or a date plus a number of days (a
 * constant, or the account's own, from a column of the accounts file read in the same pass).
 */
const columnSource = z.union(
  [
    columnRef,
    z.array(columnRef).min(1, 'one header or more'),
    z.strictObject({ value: z.string() }),
    /** The first of these headers whose value is not empty (a due date, else the issue date). */
    z.strictObject({ first: z.array(columnRef).min(1) }),
    z.strictObject({ header: columnRef, map: z.record(z.string(), z.string()) }),
    /** The amounts of these columns added up, exactly (net + tax). */
    z.strictObject({ sum: z.array(columnRef).min(1, 'one column or more') }),
    /** A date plus days: a constant, or the account's, from a column of the accounts file. */
    z.strictObject({
      date: columnRef,
      plusDays: z.union([
        z.number().int().min(0, 'a number of days, 0 or more'),
        z.strictObject({ accountColumn: columnRef }),
      ]),
    }),
  ],
  {
    error:
      'one of: a header (or a column letter, or number), a list of them, { value }, { first: [...] }, { header, map }, { sum: [...] }, { date, plusDays: <days> or { accountColumn } }',
  },
);
export type ColumnSourceSetting = z.output<typeof columnSource>;

const AMOUNT_COLUMNS = ['totalAmount', 'taxAmount', 'paidAmount', 'openAmount'] as const;
const DATE_COLUMNS: readonly string[] = ['issuedDate', 'dueDate'];

const columnsOf = (stream: Stream) =>
  z.record(z.string(), columnSource).superRefine((columns, ctx) => {
    const known = [...CONTRACT_COLUMNS[stream].map((c) => c.name), ...EXTRA_COLUMNS[stream]];
    for (const [name, source] of Object.entries(columns)) {
      if (!known.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: [name],
          message: `not a column of ${stream} (known: ${known.join(', ')})`,
        });
      else if (isObject(source) && 'sum' in source && !(AMOUNT_COLUMNS as readonly string[]).includes(name))
        ctx.addIssue({
          code: 'custom',
          path: [name, 'sum'],
          message: `adds up amounts: ${name} is not one (${AMOUNT_COLUMNS.join(', ')})`,
        });
      else if (isObject(source) && 'plusDays' in source && !DATE_COLUMNS.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: [name, 'plusDays'],
          message: `makes a date: ${name} is not one (${DATE_COLUMNS.filter((c) => known.includes(c)).join(', ')})`,
        });
    }
  });

const isObject = (value: unknown): value is object =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

/**
 * A row to skip: the value of a column matches, equals, or is empty; `column` is how the source names
 * one (a CSV header or letter; a Singer record's path).
 */
export const skipRuleOf = <C extends z.ZodType>(column: C) =>
  z
    .strictObject({
      column,
      matches: regex.optional(),
      equals: z.string().optional(),
      empty: z.literal(true).optional(),
    })
    .refine((rule) => [rule.matches, rule.equals, rule.empty].filter((v) => v !== undefined).length === 1, {
      message: 'give one of matches, equals, empty',
    });

const skipRule = skipRuleOf(columnRef);
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
      column: columnRef,
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
