import type { Kysely } from 'kysely';

// Frozen in time: a migration never imports application code.

export async function up(db: Kysely<any>): Promise<void> {
  // Why a source is paused, since when and by whom (`auto`: after failed runs; `user`: the
  // dashboard), shown next to its resume action; and when it was last resumed, so the failed runs
  // counted towards an automatic pause start again from there.
  await db.schema
    .alterTable('sources')
    .addColumn('pause_reason', 'text')
    .addColumn('paused_at', 'timestamptz')
    .addColumn('paused_by', 'text')
    .addColumn('resumed_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sources')
    .dropColumn('resumed_at')
    .dropColumn('paused_by')
    .dropColumn('paused_at')
    .dropColumn('pause_reason')
    .execute();
}
