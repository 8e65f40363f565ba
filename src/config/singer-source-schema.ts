import { z } from 'zod';
import { CONTRACT_COLUMNS, EXTRA_COLUMNS } from '../records/columns.js';
import { skipRuleOf } from './csv-format-schema.js';

/**
 * The settings of a `type: singer` source (docs/sources-singer.md), beyond `id`, `schedule` and the
 * target keys. A Singer tap (`tap-stripe`, `tap-quickbooks`, `tap-xero`...) is run with its config
 * file, its messages read line by line; each tap stream the configuration names becomes a record
 * kind through `columns`, with the CSV source's column forms where a header is a dot path into the
 * record (`address.city`, `CustomerRef.value`, `Addresses.0.City`). Without `command`, the source is
 * fed by `receivables-sync target` (a Singer target reading the messages on its stdin).
 *
 * @example
 *   sources:
 *     - id: stripe
 *       type: singer
 *       command: [tap-stripe]
 *       config: ./tap-stripe.json
 *       streams:
 *         customers:
 *           kind: accounts
 *           columns: { sourceId: id, fullName: name, currencyCode: { first: [currency], otherwise: EUR } }
 *         invoices:
 *           kind: invoices
 *           minorUnits: true
 *           columns: { sourceId: id, number: number, accountSourceId: customer, totalAmount: total, ... }
 */

/** A dot path into a record: `name`, `address.city`, `Addresses.0.City`. */
const path = z.string().trim().min(1, 'a field of the record, or a dot path into it (address.city)');

/**
 * Where a contract column's value comes from in a record: a path, several paths joined with ", ",
 * a constant, the first path with a value (and a constant when none has one), or a path whose
 * values are translated (`map`, keys compared case-insensitively).
 */
const singerColumn = z.union([
  path,
  z.array(path).min(1, 'one path or more'),
  z.strictObject({ value: z.string() }),
  /** The first with a value; an entry may be a list of paths joined (an address's lines). */
  z.strictObject({
    first: z.array(z.union([path, z.array(path).min(1)])).min(1),
    otherwise: z.string().optional(),
  }),
  z.strictObject({ path, map: z.record(z.string(), z.string()) }),
]);
export type SingerColumnSetting = z.output<typeof singerColumn>;

/** A record to skip and count (a draft invoice, a Xero bill): a path's value matches, equals or is empty. */
const skipRule = skipRuleOf(path);
export type SingerSkipRule = z.output<typeof skipRule>;

const singerStream = z
  .strictObject({
    /** The record kind the tap stream's records are. */
    kind: z.enum(['accounts', 'invoices', 'creditNotes'], {
      error: 'one of accounts, invoices, creditNotes',
    }),
    /** Contract column -> where the record gives it; a column not named is read from a field of its name. */
    columns: z.record(z.string(), singerColumn).default({}),
    /** Records skipped and counted, never failed (a draft, a bill): any rule that matches skips. */
    skip: z.array(skipRule).default([]),
    /**
     * An invoice whose total is negative is a credit note, its amounts made positive (a Stripe
     * invoice crediting the customer's balance). For `kind: invoices` streams.
     */
    negativeIsCreditNote: z.boolean().default(false),
    /** Amounts are integers in minor units (Stripe's cents): `true` (2 decimals) or the number of decimals. */
    minorUnits: z
      .union([z.boolean(), z.number().int().min(0).max(4), z.null()])
      .transform((v) => (v === true ? 2 : v === false ? null : v))
      .default(null),
  })
  .superRefine((stream, ctx) => {
    if (stream.negativeIsCreditNote && stream.kind !== 'invoices')
      ctx.addIssue({
        code: 'custom',
        path: ['negativeIsCreditNote'],
        message: 'only for a stream of kind invoices (its negative totals become credit notes)',
      });
    const known = [...CONTRACT_COLUMNS[stream.kind].map((c) => c.name), ...EXTRA_COLUMNS[stream.kind]];
    for (const name of Object.keys(stream.columns))
      if (!known.includes(name))
        ctx.addIssue({
          code: 'custom',
          path: ['columns', name],
          message: `not a column of ${stream.kind} (known: ${known.join(', ')})`,
        });
  });
export type SingerStreamSettings = z.output<typeof singerStream>;

/** The tap's argv: a list, or one string split on spaces (no shell: quote nothing). */
const command = z.union([
  z
    .string()
    .trim()
    .min(1)
    .transform((c) => c.split(/\s+/)),
  z.array(z.string().min(1)).min(1, 'the program, then its arguments'),
]);

export const SINGER_SOURCE_FIELDS = {
  /**
   * The tap to run, without `--config`/`--state`/`--catalog` (added by the source). Absent: the
   * source is fed by `receivables-sync target` on stdin instead.
   */
  command: command.optional(),
  /**
   * `singer` (default), or `airbyte`: the command is an Airbyte source, run as `<command> read
   * --config ... --catalog ... [--state ...]` (and `discover`), its RECORD/STATE/LOG/TRACE messages
   * read as docs/sources-singer.md says.
   */
  protocol: z.enum(['singer', 'airbyte']).default('singer'),
  /** The folder the tap runs in (its relative paths): default the configuration file's folder. */
  cwd: z.string().min(1).optional(),
  /** The tap's config file (its credentials and start date), passed as `--config`. */
  config: z.string().min(1).optional(),
  /**
   * The tap's catalog, passed as `--catalog` (or `--properties` with `catalogFlag`). Absent: the tap
   * is run with `--discover` first and the streams named in `streams` are selected in what it returns.
   */
  catalog: z.string().min(1).optional(),
  /** `--catalog` (default) or `--properties`, for older taps that take their catalog under that flag. */
  catalogFlag: z.enum(['--catalog', '--properties']).default('--catalog'),
  /** Tap stream -> the kind its records are and how their fields give the contract's columns. */
  streams: z
    .record(z.string().min(1), singerStream)
    .refine(
      (s) => Object.keys(s).length > 0,
      'name at least one tap stream (customers: { kind: accounts, ... })',
    ),
  /**
   * The longest the tap may write nothing, in seconds, before it is taken for hung: it is stopped and
   * the pass fails, its cursor unchanged (0 = wait for ever).
   */
  timeoutSeconds: z.number().int().min(0).default(600),
  /** Records per batch handed to the sync engine (bounds memory). */
  batchSize: z.number().int().min(1).max(10_000).default(500),
  /**
   * Documents whose account has not arrived yet are held until it does or the input ends; past this
   * many held, the oldest go on without waiting (they fail if their account never comes).
   */
  maxHeldDocuments: z.number().int().min(0).default(100_000),
};

export const singerSettingsSchema = z.object(SINGER_SOURCE_FIELDS);
export type SingerSettings = z.output<typeof singerSettingsSchema>;
export type SingerSettingsInput = z.input<typeof singerSettingsSchema>;
