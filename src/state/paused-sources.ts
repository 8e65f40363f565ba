import type { StateDb } from './database.js';

/**
 * The `paused` flag of each source (the `sources` table). A paused source is not synced by the
 * worker (schedules, drop-folder polling, queued jobs) and the dashboard refuses its actions until
 * it is resumed.
 */
export class PausedSources {
  constructor(private readonly db: StateDb) {}

  /** The ids of the paused sources. */
  async list(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('sources').select('id').where('paused', '=', true).execute();
    return new Set(rows.map((r) => r.id));
  }

  async isPaused(sourceId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('sources')
      .select('paused')
      .where('id', '=', sourceId)
      .executeTakeFirst();
    return row?.paused ?? false;
  }

  /** Sets the flag, creating the source's row when no run created it yet. */
  async set(sourceId: string, type: string, paused: boolean): Promise<void> {
    const now = new Date();
    await this.db
      .insertInto('sources')
      .values({ id: sourceId, type, paused, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ paused, updated_at: now }))
      .execute();
  }
}
