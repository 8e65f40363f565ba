import { sql } from 'kysely';
import type { DropFileEntry, SeenDropFile } from '../domain/drop-files.js';
import type { StateDb } from './database.js';

/** The drop-file ledger of the CSV sources, in the state DB's `drop_files` table. */
export class DropFilesRepository {
  constructor(private readonly db: StateDb) {}

  /** The latest entry of this content, the original rather than a duplicate of it (to be named). */
  async seen(sourceId: string, checksum: string): Promise<SeenDropFile | null> {
    const row = await this.db
      .selectFrom('drop_files')
      .select(['status', 'name', 'finished_at', 'archived_path', 'rows', 'failed_rows'])
      .where('source_id', '=', sourceId)
      .where('checksum', '=', checksum)
      .orderBy(sql`status = 'duplicate'`)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row
      ? {
          status: row.status as SeenDropFile['status'],
          name: row.name,
          ...(row.finished_at ? { finishedAt: new Date(row.finished_at) } : {}),
          archivedPath: row.archived_path,
          rows: row.rows,
          failedRows: row.failed_rows,
        }
      : null;
  }

  async record(entry: DropFileEntry): Promise<void> {
    await this.db
      .insertInto('drop_files')
      .values({
        source_id: entry.sourceId,
        name: entry.name,
        checksum: entry.checksum,
        size: entry.size,
        status: entry.status,
        rows: entry.rows,
        failed_rows: entry.failedRows,
        error: entry.error ?? null,
        archived_path: entry.archivedPath ?? null,
        report_path: entry.reportPath ?? null,
        claimed_at: entry.claimedAt,
        finished_at: entry.finishedAt,
      })
      .execute();
  }

  async recent(sourceId: string, limit = 20) {
    return this.db
      .selectFrom('drop_files')
      .selectAll()
      .where('source_id', '=', sourceId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
  }
}
