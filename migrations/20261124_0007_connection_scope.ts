import { type Kysely, sql } from 'kysely';

// Frozen in time: a migration never imports application code.

/** The tables whose rows belong to one API connection and one organization (a source's scope). */
const SCOPED_TABLES = ['record_map', 'pending_writes', 'cursors', 'failures', 'runs'] as const;

/**
 * Each source syncs into one connection and one organization, and what the state holds of it only
 * means something there: a remote id, a cursor, a failure. The rows carry that scope, and a source's
 * state is looked up within it, so a source moved to another organization starts afresh there and
 * finds its old state again when moved back. Existing rows stay under the `default` connection with
 * the organization '' ("not stamped yet"), which the application stamps once it knows the
 * organization the default connection resolves to.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const table of SCOPED_TABLES) {
    await db.schema
      .alterTable(table)
      .addColumn('connection_id', 'text', (c) => c.notNull().defaultTo('default'))
      .addColumn('organization_id', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  }
  // The keys gain the scope in front: every lookup of a pass names it, so it stays one index range.
  await sql`alter table record_map drop constraint record_map_pk,
    add constraint record_map_pk primary key (connection_id, organization_id, source_id, kind, source_key)`.execute(
    db,
  );
  await sql`alter table cursors drop constraint cursors_pk,
    add constraint cursors_pk primary key (connection_id, organization_id, source_id, stream)`.execute(db);
  await db.schema.dropIndex('pending_writes_record').execute();
  await db.schema
    .createIndex('pending_writes_record')
    .on('pending_writes')
    .columns(['connection_id', 'organization_id', 'source_id', 'kind', 'source_key', 'operation'])
    .unique()
    .execute();
  await db.schema.dropIndex('failures_open_record').execute();
  await sql`create unique index failures_open_record
    on failures (connection_id, organization_id, source_id, kind, source_key) where resolved_at is null`.execute(
    db,
  );
  // runs_source_started, runs_in_progress and failures_closed stay: they serve reads of a source
  // across its scopes (the dashboard's history, the abandoned runs).
}

/**
 * Back to one state per source. Refused while a key is held in two scopes (the older key would
 * collide): which of the two to keep is not for a migration to guess.
 */
export async function down(db: Kysely<any>): Promise<void> {
  const keys: Array<[table: string, columns: string, where: string]> = [
    ['record_map', 'source_id, kind, source_key', 'true'],
    ['cursors', 'source_id, stream', 'true'],
    ['pending_writes', 'source_id, kind, source_key, operation', 'true'],
    ['failures', 'source_id, kind, source_key', 'resolved_at is null'],
  ];
  for (const [table, columns, where] of keys) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from (
      select 1 from ${sql.table(table)} where ${sql.raw(where)}
      group by ${sql.raw(columns)} having count(*) > 1) as twice`.execute(db);
    const n = rows[0]?.n ?? 0;
    if (n > 0)
      throw new Error(
        `cannot undo 20261124_0007_connection_scope: ${n} keys of ${table} are held in more than one connection or organization`,
      );
  }
  await db.schema.dropIndex('failures_open_record').execute();
  await sql`create unique index failures_open_record on failures (source_id, kind, source_key) where resolved_at is null`.execute(
    db,
  );
  await db.schema.dropIndex('pending_writes_record').execute();
  await db.schema
    .createIndex('pending_writes_record')
    .on('pending_writes')
    .columns(['source_id', 'kind', 'source_key', 'operation'])
    .unique()
    .execute();
  await sql`alter table cursors drop constraint cursors_pk,
    add constraint cursors_pk primary key (source_id, stream)`.execute(db);
  await sql`alter table record_map drop constraint record_map_pk,
    add constraint record_map_pk primary key (source_id, kind, source_key)`.execute(db);
  for (const table of SCOPED_TABLES) {
    await db.schema.alterTable(table).dropColumn('organization_id').dropColumn('connection_id').execute();
  }
}
