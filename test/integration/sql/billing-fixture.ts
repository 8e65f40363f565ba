import pg from 'pg';
import type { RowProblem, SourceRecord, Stream } from '../../../src/domain/records.js';
import type { SourceBatch, SourceUnit } from '../../../src/sources/source.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

/**
 * A "billing" schema of its own per test file: customers, invoices and credit notes with
 * `updated_at`, `id` and a `deleted` tombstone column, filled with generate_series (fast), and the
 * stream queries that read them in the contract's columns.
 */
export interface BillingDb {
  schema: string;
  /** Runs SQL with `$schema` replaced by the quoted schema name. */
  sql<T extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<T[]>;
  close(): Promise<void>;
}

/** Seeded timestamps: customer i at BASE + i minutes, invoice j at BASE + 10 j seconds. */
export const BASE = '2026-01-01 00:00:00+00';

export async function createBillingDb(prefix: string): Promise<BillingDb> {
  const schema = uniqueSchema(prefix);
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  const sql = async (text: string, values: unknown[] = []) =>
    (await client.query(text.replaceAll('$schema', `"${schema}"`), values)).rows;
  await sql(`
    create schema $schema;
    create table $schema.customers (
      id bigint primary key, name text, currency text, street text, city text, postal_code text,
      country text, tags text[] not null default '{}', deleted boolean not null default false,
      updated_at timestamptz not null);
    create index on $schema.customers (updated_at, id);
    create table $schema.invoices (
      id bigint primary key, customer_id bigint not null, number text not null, issued_on date not null,
      due_on date not null, total numeric(12,2) not null, tax numeric(12,2) not null, paid numeric(12,2),
      deleted boolean not null default false, updated_at timestamptz not null);
    create index on $schema.invoices (updated_at, id);
    create table $schema.credit_notes (
      id bigint primary key, customer_id bigint not null, number text not null, issued_on date not null,
      total numeric(12,2) not null, tax numeric(12,2) not null,
      deleted boolean not null default false, updated_at timestamptz not null);
    create index on $schema.credit_notes (updated_at, id);`);
  return {
    schema,
    sql: sql as BillingDb['sql'],
    async close() {
      await client.end();
      await dropSchema(schema);
    },
  };
}

/** `accounts` customers and `invoices` invoices (spread over the customers), all valid. */
export async function seedBilling(
  db: BillingDb,
  counts: { accounts: number; invoices: number; creditNotes?: number },
) {
  await db.sql(
    `insert into $schema.customers (id, name, currency, street, city, postal_code, country, tags, updated_at)
     select i, 'Customer ' || i, case when i % 4 = 0 then 'USD' else 'EUR' end,
            i || ' rue de la Paix', case when i % 2 = 0 then 'Paris' else 'Lyon' end, '750' || (i % 20), 'FR',
            case when i % 10 = 0 then array['vip'] else '{}'::text[] end,
            timestamptz '${BASE}' + i * interval '1 minute'
     from generate_series(1, $1::int) i`,
    [counts.accounts],
  );
  await db.sql(
    `insert into $schema.invoices (id, customer_id, number, issued_on, due_on, total, tax, paid, updated_at)
     select j, ((j - 1) % $2::int) + 1, 'INV-' || lpad(j::text, 6, '0'),
            date '2025-01-01' + (j % 365), date '2025-01-31' + (j % 365),
            100 + (j % 900) + 0.5, round((100 + (j % 900) + 0.5) * 0.2, 2),
            case when j % 3 = 0 then 10.00 end,
            timestamptz '${BASE}' + j * interval '10 seconds'
     from generate_series(1, $1::int) j`,
    [counts.invoices, counts.accounts],
  );
  await db.sql(
    `insert into $schema.credit_notes (id, customer_id, number, issued_on, total, tax, updated_at)
     select k, ((k - 1) % $2::int) + 1, 'CN-' || lpad(k::text, 5, '0'), date '2025-06-01' + (k % 100),
            20 + k, 4, timestamptz '${BASE}' + k * interval '1 hour'
     from generate_series(1, $1::int) k`,
    [counts.creditNotes ?? 0, counts.accounts],
  );
  await db.sql('analyze $schema.customers; analyze $schema.invoices; analyze $schema.credit_notes');
}

/** The stream queries over the billing schema, in the contract's columns plus the cursor columns. */
export function billingStreams(schema: string) {
  return {
    accounts: {
      query: `select id::text as "sourceId", name as "fullName", currency as "currencyCode",
                street as "billingAddress.street", city as "billingAddress.city",
                postal_code as "billingAddress.postalCode", country as "billingAddress.country",
                tags, deleted, updated_at, id
              from "${schema}".customers`,
      deletedColumn: 'deleted',
    },
    invoices: {
      // Unquoted aliases arrive lower-cased (accountsourceid): matched to the contract all the same.
      query: `select 'INV-' || id as "sourceId", customer_id::text as accountSourceId, number,
                issued_on as "issuedDate", due_on as "dueDate", total as "totalAmount", tax as "taxAmount",
                paid as "paidAmount", deleted, updated_at, id
              from "${schema}".invoices;`,
      deletedColumn: 'deleted',
    },
    creditNotes: {
      query: `select 'CN-' || id as "sourceId", customer_id::text as "accountSourceId", number,
                issued_on as "issuedDate", total as "totalAmount", tax as "taxAmount", deleted, updated_at, id
              from "${schema}".credit_notes`,
      deletedColumn: 'deleted',
    },
  };
}

export interface Drained {
  records: Record<Stream, SourceRecord[]>;
  rejected: RowProblem[];
  /** The most rows (records + refused) one batch held. */
  largestBatch: number;
  units: string[];
}

/** Drains every unit of a pass as the engine would, then completes (or releases) each. */
export async function drain(
  units: AsyncIterable<SourceUnit>,
  settle: 'complete' | 'release' | 'abandon' = 'complete',
): Promise<Drained> {
  const out: Drained = {
    records: { accounts: [], invoices: [], creditNotes: [] },
    rejected: [],
    largestBatch: 0,
    units: [],
  };
  for await (const unit of units) {
    out.units.push(unit.name);
    for await (const batch of unit.batches() as AsyncIterable<SourceBatch>) {
      out.records[unit.stream].push(...batch.records.map((r) => r.record));
      out.rejected.push(...batch.rejected);
      out.largestBatch = Math.max(out.largestBatch, batch.records.length + batch.rejected.length);
    }
    if (settle === 'complete') await unit.complete({ failures: [] });
    else if (settle === 'release') await unit.release();
    else await unit.abandon('test');
  }
  return out;
}
