import { type Kysely, sql } from 'kysely';

// Frozen in time: a migration never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sources')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('paused', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('runs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('dry_run', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('counts', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('error', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('runs_source_started')
    .on('runs')
    .columns(['source_id', 'started_at'])
    .execute();

  await db.schema
    .createTable('cursors')
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('stream', 'text', (c) => c.notNull())
    .addColumn('cursor', 'jsonb')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('cursors_pk', ['source_id', 'stream'])
    .execute();

  // source record -> API id, with the hash of what was last synced (unchanged = no API call).
  await db.schema
    .createTable('record_map')
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('api_id', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('synced_state', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('synced_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_run_id', 'bigint')
    .addPrimaryKeyConstraint('record_map_pk', ['source_id', 'kind', 'source_key'])
    .execute();

  // Written before a write is sent, so a crash between send and answer is recovered with the same key.
  await db.schema
    .createTable('pending_writes')
    .addColumn('idempotency_key', 'text', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('body_hash', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('pending_writes_record')
    .on('pending_writes')
    .columns(['source_id', 'kind', 'source_key', 'operation'])
    .unique()
    .execute();

  await db.schema
    .createTable('failures')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('api_code', 'text')
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('file', 'text')
    .addColumn('line', 'integer')
    .addColumn('column_name', 'text')
    .addColumn('retryable', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('next_retry_at', 'timestamptz')
    .addColumn('payload', 'jsonb')
    .addColumn('run_id', 'bigint')
    .addColumn('first_failed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('last_failed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('resolved_at', 'timestamptz')
    .execute();
  await sql`create unique index failures_open_record on failures (source_id, kind, source_key) where resolved_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('drop_files')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('checksum', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_rows', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('archived_path', 'text')
    .addColumn('report_path', 'text')
    .addColumn('claimed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('drop_files_checksum')
    .on('drop_files')
    .columns(['source_id', 'checksum'])
    .unique()
    .execute();

  // OAuth credentials, encrypted by the application (AES-256-GCM) before they get here.
  await db.schema
    .createTable('credentials')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('ciphertext', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of [
    'credentials',
    'drop_files',
    'failures',
    'pending_writes',
    'record_map',
    'cursors',
    'runs',
    'sources',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
