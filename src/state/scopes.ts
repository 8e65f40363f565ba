import { type RawBuilder, sql } from 'kysely';
import { AppError } from '../domain/errors.js';
import type { StateDb } from './database.js';

/**
 * The API connection and organization a source syncs into. What the state holds of a source only
 * means something there: a remote id of the record map names a record of one organization, a SQL
 * cursor was read for one, a failure was refused by one. So `record_map`, `pending_writes`,
 * `cursors` and `failures` are read and written per source within its scope (a source moved to
 * another organization starts afresh there, and finds its old state again when moved back); `runs`
 * record theirs.
 */
export interface StateScope {
  /** The API connection's id (`default` for the connection of a single-connection config). */
  connectionId: string;
  /** The organization's uuid; '' for rows written before it was known ("not stamped yet"). */
  organizationId: string;
}

/**
 * The scope of the rows written before scopes existed (migration 0007), and of every source a
 * caller gives no scope: the default connection, organization not stamped yet.
 */
export const UNSTAMPED_SCOPE: StateScope = Object.freeze({ connectionId: 'default', organizationId: '' });

/** Which scope each source syncs into. */
export interface StateScopes {
  /** The source's scope; `UNSTAMPED_SCOPE` for a source it does not know. */
  of(sourceId: string): StateScope;
}

/**
 * The scopes of these sources (a copy: later changes to `map` are not seen); any other source is
 * `UNSTAMPED_SCOPE`.
 *
 * @example
 * const scopes = stateScopes(new Map([['erp-csv', { connectionId: 'default', organizationId: orgId }]]));
 * const repos = syncStateRepos(db, scopes);
 */
export function stateScopes(map: ReadonlyMap<string, StateScope>): StateScopes {
  const bySource = new Map(map);
  return { of: (sourceId) => bySource.get(sourceId) ?? UNSTAMPED_SCOPE };
}

/** Every source in `UNSTAMPED_SCOPE`: what a repository uses when given no scopes. */
export const UNSTAMPED_SCOPES: StateScopes = stateScopes(new Map());

/** The columns that place a new row of a source in its scope. */
export function scopeColumns(
  scopes: StateScopes,
  sourceId: string,
): { source_id: string; connection_id: string; organization_id: string } {
  const { connectionId, organizationId } = scopes.of(sourceId);
  return { source_id: sourceId, connection_id: connectionId, organization_id: organizationId };
}

/**
 * `source_id = ? and connection_id = ? and organization_id = ?`: the rows of a source in its scope
 * (of `table`, a table name or alias, when the query joins several). The scope's columns lead the
 * keys, so it is one index range as `source_id = ?` alone was.
 */
export function sourceInScope(scopes: StateScopes, sourceId: string, table?: string): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(table === undefined ? name : `${table}.${name}`);
  const { connectionId, organizationId } = scopes.of(sourceId);
  return sql<boolean>`(${column('source_id')} = ${sourceId} and ${column('connection_id')} = ${connectionId} and ${column('organization_id')} = ${organizationId})`;
}

/**
 * Each scoped table, with the key a stamped row must not already hold (`unlessSet`: the key only
 * binds the rows where this column is null, as the open-failure index does). Runs have no key: all
 * are stamped.
 */
const ADOPTED_TABLES: ReadonlyArray<{ table: string; key: readonly string[]; unlessSet?: string }> = [
  { table: 'record_map', key: ['source_id', 'kind', 'source_key'] },
  { table: 'pending_writes', key: ['source_id', 'kind', 'source_key', 'operation'] },
  { table: 'cursors', key: ['source_id', 'stream'] },
  { table: 'failures', key: ['source_id', 'kind', 'source_key'], unlessSet: 'resolved_at' },
  { table: 'runs', key: [] },
];

/**
 * Stamps the state written before scopes existed (connection `default`, organization '') with the
 * organization the default connection resolves to, in one transaction: call it at start, before
 * any pass. A row whose key that organization already holds (written by a scoped pass, which then
 * started afresh) is left unstamped: the scoped one is the newer. Returns the rows stamped per table
 * (0 everywhere once done: the lookup is one index range on the keyed tables, a scan of `failures`
 * and `runs`).
 */
export async function adoptUnstampedState(
  db: StateDb,
  organizationId: string,
): Promise<Record<string, number>> {
  if (organizationId === '')
    throw new AppError('STATE_SCOPE_INVALID', 'state DB: cannot stamp state with an empty organization id');
  const { connectionId, organizationId: unstamped } = UNSTAMPED_SCOPE;
  return db.transaction().execute(async (tx) => {
    const stamped: Record<string, number> = {};
    for (const { table, key, unlessSet } of ADOPTED_TABLES) {
      const sameKey = sql.join(
        key.map((column) => sql`s.${sql.ref(column)} = t.${sql.ref(column)}`),
        sql` and `,
      );
      const bound =
        unlessSet === undefined
          ? sql`true`
          : sql`s.${sql.ref(unlessSet)} is null and t.${sql.ref(unlessSet)} is null`;
      const collides =
        key.length === 0
          ? sql`false`
          : sql`exists (select 1 from ${sql.table(table)} s where s.connection_id = ${connectionId}
              and s.organization_id = ${organizationId} and ${sameKey} and ${bound})`;
      const result = await sql`update ${sql.table(table)} t set organization_id = ${organizationId}
        where t.connection_id = ${connectionId} and t.organization_id = ${unstamped}
          and not ${collides}`.execute(tx);
      stamped[table] = Number(result.numAffectedRows ?? 0);
    }
    return stamped;
  });
}
