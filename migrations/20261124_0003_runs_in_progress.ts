import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Every pass first looks for its source's runs still marked `running` (abandoned by a killed
  // process), and the dashboard lists the runs in progress: both read only these few rows.
  await sql`create index runs_in_progress on runs (source_id) where status = 'running'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('runs_in_progress').execute();
}
