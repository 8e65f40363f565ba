import { type Kysely, sql } from 'kysely';

// Frozen in time: a migration never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // The records each run created, updated or failed (unchanged ones are not written: a re-run of
  // a large source costs nothing here), with the API id the record had then. Written in one
  // statement per engine batch.
  await db.schema
    .createTable('run_records')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('run_id', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('api_id', 'text')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  // A run's page lists its records in the order they were written.
  await db.schema.createIndex('run_records_run').on('run_records').columns(['run_id', 'id']).execute();
  // The record search lists the runs that touched one record.
  await db.schema
    .createIndex('run_records_record')
    .on('run_records')
    .columns(['source_key', 'kind', 'run_id'])
    .execute();

  // The log lines of a run (those carrying its runId), bounded per run and kept for recent runs only.
  await db.schema
    .createTable('run_logs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('run_id', 'bigint', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .addColumn('level', 'text', (c) => c.notNull())
    .addColumn('msg', 'text', (c) => c.notNull())
    .addColumn('fields', 'jsonb')
    .execute();
  await db.schema.createIndex('run_logs_run').on('run_logs').columns(['run_id', 'id']).execute();

  // A failure dismissed by a user: closed (resolved_at is set too, so it no longer counts as open)
  // and kept in the history with who dismissed it and why.
  await db.schema
    .alterTable('failures')
    .addColumn('dismissed_at', 'timestamptz')
    .addColumn('dismissed_reason', 'text')
    .addColumn('dismissed_by', 'text')
    .execute();
  // The history of a source's closed failures, latest first (the open ones have an index of their own).
  await sql`create index failures_closed on failures (source_id, resolved_at) where resolved_at is not null`.execute(
    db,
  );
  // A run's page lists the failures it last recorded.
  await sql`create index failures_run on failures (run_id) where run_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('failures_run').execute();
  await db.schema.dropIndex('failures_closed').execute();
  await db.schema
    .alterTable('failures')
    .dropColumn('dismissed_by')
    .dropColumn('dismissed_reason')
    .dropColumn('dismissed_at')
    .execute();
  await db.schema.dropTable('run_logs').ifExists().execute();
  await db.schema.dropTable('run_records').ifExists().execute();
}
