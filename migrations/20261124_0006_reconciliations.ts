import { type Kysely, sql } from 'kysely';

// Frozen in time: a migration never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // One row per reconciliation of one source (`reconcile`, the worker's scheduled check): what the
  // service held compared with the record map, counted per category and kind (`counts`), the
  // drifted records themselves (`items`, bounded by the writer), and what it cost in API requests.
  // `status`: running, then done or failed (`error`); `drift`: what remained to repair at its end.
  await db.schema
    .createTable('reconciliations')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('repair', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addColumn('drift', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('counts', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('items', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('items_total', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('repairs', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  // The last reconciliations of a source, latest first (the dashboard's card, the metrics).
  await db.schema
    .createIndex('reconciliations_source')
    .on('reconciliations')
    .columns(['source_id', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('reconciliations').execute();
}
