import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // The last synced version of each record, so one record (or a whole source) can be re-synced on
  // demand without its source producing it again (a CSV file is archived after its pass).
  await db.schema.alterTable('record_map').addColumn('record', 'jsonb').execute();
  // The drop-file ledger keeps a history: the same content can be dropped again after a failure.
  await db.schema.dropIndex('drop_files_checksum').execute();
  await db.schema
    .createIndex('drop_files_checksum')
    .on('drop_files')
    .columns(['source_id', 'checksum', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('drop_files_checksum').execute();
  await db.schema
    .createIndex('drop_files_checksum')
    .on('drop_files')
    .columns(['source_id', 'checksum'])
    .unique()
    .execute();
  await db.schema.alterTable('record_map').dropColumn('record').execute();
}
