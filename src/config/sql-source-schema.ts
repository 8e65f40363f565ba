import { z } from 'zod';

/**
 * The settings of a `type: sql` source, beyond `id`, `urlEnv`, `schedule` and `connectionId`.
 * `SQL_SOURCE_FIELDS` is a zod shape the configuration schema spreads into its `sql` entry, so the
 * file is validated once at start; the SQL source's `parseSqlSettings` applies the same schema
 * (idempotent) for callers that build a configuration by hand (tests, the bench).
 *
 * @example
 *   sources:
 *     - id: billing-db
 *       type: sql
 *       urlEnv: BILLING_DATABASE_URL   # postgres://, postgresql://, mysql:// or mariadb://
 *       lookbackSeconds: 300
 *       streams:
 *         accounts:
 *           query: select id::text as "sourceId", name as "fullName", currency as "currencyCode",
 *                  updated_at, id, deleted from billing.customers
 *           deletedColumn: deleted
 *         invoices:
 *           query: select ... from billing.invoices
 */

/** A column of the query's result, quoted as written: letters, digits and `_`. */
export const SQL_COLUMN_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const column = z
  .string()
  .regex(SQL_COLUMN_RE, 'a column name: letters, digits and "_", not starting with a digit');

/** Whether `Intl` knows the zone (`Europe/Paris`, `UTC`). */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const streamFields = {
  /**
   * One SELECT returning the contract's columns (aliased: `as "sourceId"`, `as "billingAddress.city"`)
   * plus the cursor columns. It is wrapped as a subquery: no trailing `order by`/`limit` needed.
   */
  query: z.string().trim().min(1, 'a query is required'),
  /**
   * The keyset cursor: an increasing timestamp, then a column unique per row that breaks ties.
   * Default `[updated_at, id]`. Rows where either is null are not read.
   */
  cursorColumns: z.tuple([column, column]).default(['updated_at', 'id']),
  /** A boolean column: true marks a row deleted in the billing system (a tombstone). */
  deletedColumn: column.optional(),
};

/** Accounts: a tombstone unlinks the account's source (default), adds a tag, or is skipped. */
const accountStream = z.strictObject({
  ...streamFields,
  onDelete: z.enum(['unlink', 'tag', 'skip']).default('unlink'),
  /** The tag a tombstone adds with `onDelete: tag`. */
  deletedTag: z.string().trim().min(1).default('deleted-in-source'),
});

/** Invoices and credit notes are never deleted through the API: a tombstone is logged and skipped. */
const documentStream = z.strictObject(streamFields);

export const SQL_SOURCE_FIELDS = {
  streams: z
    .strictObject({
      accounts: accountStream.optional(),
      invoices: documentStream.optional(),
      creditNotes: documentStream.optional(),
    })
    .refine((s) => s.accounts || s.invoices || s.creditNotes, {
      message: 'at least one stream (accounts, invoices, creditNotes) needs a query',
    }),
  /**
   * Each pass starts this many seconds before the stored cursor, so rows committed late with an
   * `updated_at` behind the cursor are still read. Rows read again are unchanged: no API call.
   */
  lookbackSeconds: z.number().int().min(0).default(300),
  /** Read every row on every pass (the cursor is still stored, for `status`). */
  fullRefresh: z.boolean().default(false),
  /**
   * The time limit of every query, in milliseconds (0 = none): Postgres `statement_timeout`, MySQL
   * `max_execution_time`, MariaDB `max_statement_time`.
   */
  statementTimeoutMs: z.number().int().min(0).default(60_000),
  /** Rows per query (keyset page); bounds memory. */
  batchSize: z.number().int().min(1).max(50_000).default(1000),
  /**
   * Where the zone-less timestamps the queries return are (Postgres `timestamp`, MySQL `DATETIME`):
   * an IANA zone like `Europe/Paris`. It gives their `updatedAt` (the cursor's time when there is
   * no updatedAt column); the cursor itself is compared as the database printed it. Timestamps with
   * a zone (Postgres `timestamptz`, MySQL/MariaDB `TIMESTAMP`, read in UTC) do not need it.
   */
  timeZone: z.string().refine(isTimeZone, 'an IANA time zone, like UTC or Europe/Paris').default('UTC'),
  /** Folder of the PDFs named by a `file` column (relative paths under it); without it `file` must be empty. */
  filesDir: z.string().min(1).optional(),
};

export const sqlSettingsSchema = z.object(SQL_SOURCE_FIELDS);

export type SqlSettings = z.output<typeof sqlSettingsSchema>;
export type SqlSettingsInput = z.input<typeof sqlSettingsSchema>;
export type AccountStreamSettings = z.output<typeof accountStream>;
export type DocumentStreamSettings = z.output<typeof documentStream>;
/** One stream's settings; `onDelete` is `skip` for documents. */
export type StreamSettings = DocumentStreamSettings &
  Partial<Pick<AccountStreamSettings, 'onDelete' | 'deletedTag'>>;
