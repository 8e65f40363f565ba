import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  FolderMigrationProvider,
  openStateDatabase,
  type StateDatabase,
} from '../../../src/state/database.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { scopedToSchema } from '../../../src/state/schema-introspector.js';
import { adoptUnstampedState, stateScopes } from '../../../src/state/scopes.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

const BEFORE_SCOPES = '20261124_0006_reconciliations';
const ORG = '5b0c8a52-94c3-4a4e-9d0b-6f1f3a2b7c11';

/**
 * Migration 0007 (state keyed by connection and organization) over a state DB written by 0006, and
 * the adoption of that state by the organization the default connection resolves to.
 */
describe('state written before scopes (Postgres)', () => {
  let schema: string;
  let state: StateDatabase;
  let migrator: Migrator;
  beforeEach(async () => {
    schema = uniqueSchema('scope_migration');
    state = await openStateDatabase({
      databaseUrl: TEST_DATABASE_URL,
      dataDir: '/tmp/unused',
      schema,
      migrate: false,
    });
    migrator = new Migrator({
      db: scopedToSchema(state.db, schema),
      provider: new FolderMigrationProvider(),
      migrationTableSchema: schema,
    });
    const { error } = await migrator.migrateTo(BEFORE_SCOPES);
    if (error) throw error;
  });
  afterEach(async () => {
    await state.close();
    await dropSchema(schema);
  });

  /** One row of each scoped table for `erp-csv`, written as 0006 knew them. */
  async function write0006State(db: Kysely<any>) {
    await db.insertInto('sources').values({ id: 'erp-csv', type: 'csv' }).execute();
    const { id: runId } = await db
      .insertInto('runs')
      .values({ source_id: 'erp-csv', trigger: 'once', status: 'partial' })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('record_map')
      .values({
        source_id: 'erp-csv',
        kind: 'invoice',
        source_key: 'INV-1',
        api_id: 'inv_1',
        content_hash: 'h1',
      })
      .execute();
    await db
      .insertInto('cursors')
      .values({ source_id: 'erp-csv', stream: 'invoices', cursor: JSON.stringify({ after: '2026-11-01' }) })
      .execute();
    await db
      .insertInto('pending_writes')
      .values({
        idempotency_key: 'key-1',
        source_id: 'erp-csv',
        kind: 'invoice',
        source_key: 'INV-2',
        operation: 'create',
        body_hash: 'b2',
      })
      .execute();
    await db
      .insertInto('failures')
      .values([
        { source_id: 'erp-csv', kind: 'invoice', source_key: 'INV-3', stage: 'create', message: 'HTTP 400' },
        {
          source_id: 'erp-csv',
          kind: 'invoice',
          source_key: 'INV-3',
          stage: 'create',
          message: 'HTTP 503',
          resolved_at: new Date(),
        },
      ])
      .execute();
    return String(runId);
  }

  async function migrateToLatest() {
    const { error } = await migrator.migrateToLatest();
    if (error) throw error;
  }

  const scopesOf = async (table: string) =>
    (
      await sql<{
        scope: string;
      }>`select distinct connection_id || '/' || organization_id as scope from ${sql.table(table)}`.execute(
        state.db,
      )
    ).rows.map((r) => r.scope);

  it('when a 0006 state DB is migrated, then its rows are kept under the default connection, not stamped, and read as before', async () => {
    await write0006State(state.db);
    await migrateToLatest();
    for (const table of ['record_map', 'cursors', 'pending_writes', 'failures', 'runs'])
      expect(await scopesOf(table)).toEqual(['default/']);

    const repos = syncStateRepos(state.db);
    expect(await repos.recordMap.get('erp-csv', 'invoice', 'INV-1')).toMatchObject({ apiId: 'inv_1' });
    expect(await repos.cursors.get('erp-csv', 'invoices')).toEqual({ after: '2026-11-01' });
    expect(await repos.failures.countOpen('erp-csv')).toBe(1);
    const ref = { sourceId: 'erp-csv', kind: 'invoice' as const, sourceKey: 'INV-2', operation: 'create' };
    expect(await repos.pending.begin(ref, 'b2')).toBe('key-1');
    expect((await repos.runs.recent('erp-csv'))[0]).toMatchObject({
      connectionId: 'default',
      organizationId: '',
    });
  });

  it('when the unstamped state is adopted, then a pass scoped to the default connection and its organization finds it, and a second adoption stamps nothing', async () => {
    const runId = await write0006State(state.db);
    await migrateToLatest();
    const scoped = syncStateRepos(
      state.db,
      stateScopes(new Map([['erp-csv', { connectionId: 'default', organizationId: ORG }]])),
    );
    expect(await scoped.recordMap.get('erp-csv', 'invoice', 'INV-1')).toBeUndefined();

    expect(await adoptUnstampedState(state.db, ORG)).toEqual({
      record_map: 1,
      pending_writes: 1,
      cursors: 1,
      failures: 2,
      runs: 1,
    });
    expect(await scoped.recordMap.get('erp-csv', 'invoice', 'INV-1')).toMatchObject({ apiId: 'inv_1' });
    expect(await scoped.cursors.get('erp-csv', 'invoices')).toEqual({ after: '2026-11-01' });
    expect(await scoped.failures.openKinds('erp-csv')).toEqual(new Set(['invoice']));
    const ref = { sourceId: 'erp-csv', kind: 'invoice' as const, sourceKey: 'INV-2', operation: 'create' };
    expect(await scoped.pending.begin(ref, 'b2')).toBe('key-1');
    expect((await scoped.runs.recent('erp-csv')).find((r) => r.id === runId)).toMatchObject({
      organizationId: ORG,
    });
    // Unscoped, the source now holds nothing: its state is the organization's.
    expect(await syncStateRepos(state.db).recordMap.count('erp-csv')).toEqual({
      account: 0,
      invoice: 0,
      creditNote: 0,
    });

    expect(await adoptUnstampedState(state.db, ORG)).toEqual({
      record_map: 0,
      pending_writes: 0,
      cursors: 0,
      failures: 0,
      runs: 0,
    });
  });

  it('when the organization already holds a key, then the adoption leaves that unstamped row and stamps the others', async () => {
    await migrateToLatest();
    const unscoped = syncStateRepos(state.db);
    const scoped = syncStateRepos(
      state.db,
      stateScopes(new Map([['erp-csv', { connectionId: 'default', organizationId: ORG }]])),
    );
    const saved = (apiId: string, sourceKey: string) => ({
      sourceKey,
      apiId,
      contentHash: 'h',
      syncedState: {},
    });
    await unscoped.recordMap.save('erp-csv', 'invoice', saved('old_1', 'INV-1'), null);
    await unscoped.recordMap.save('erp-csv', 'invoice', saved('old_2', 'INV-2'), null);
    await scoped.recordMap.save('erp-csv', 'invoice', saved('new_1', 'INV-1'), null);
    await unscoped.cursors.set('erp-csv', 'invoices', { after: 'old' });
    await scoped.cursors.set('erp-csv', 'invoices', { after: 'new' });
    const failure = { sourceId: 'erp-csv', kind: 'invoice' as const, stage: 'create', retryable: false };
    await unscoped.failures.recordMany([
      { ...failure, sourceKey: 'INV-5', message: 'old' },
      { ...failure, sourceKey: 'INV-6', message: 'old' },
    ]);
    await scoped.failures.record({ ...failure, sourceKey: 'INV-5', message: 'new' });

    expect(await adoptUnstampedState(state.db, ORG)).toMatchObject({
      record_map: 1,
      cursors: 0,
      failures: 1,
    });
    expect(await scoped.recordMap.get('erp-csv', 'invoice', 'INV-1')).toMatchObject({ apiId: 'new_1' });
    expect(await scoped.recordMap.get('erp-csv', 'invoice', 'INV-2')).toMatchObject({ apiId: 'old_2' });
    expect(await scoped.cursors.get('erp-csv', 'invoices')).toEqual({ after: 'new' });
    expect(
      (await scoped.failures.open({ sourceId: 'erp-csv' })).map((f) => [f.sourceKey, f.message]),
    ).toEqual([
      ['INV-5', 'new'],
      ['INV-6', 'old'],
    ]);
    // What was left is still there, under no organization.
    expect(await unscoped.recordMap.get('erp-csv', 'invoice', 'INV-1')).toMatchObject({ apiId: 'old_1' });
    expect(await unscoped.failures.countOpen('erp-csv')).toBe(1);
    await expect(adoptUnstampedState(state.db, '')).rejects.toMatchObject({ code: 'STATE_SCOPE_INVALID' });
  });

  it('when 0007 is undone, then one scope per key goes back to the old keys; two scopes of one key are refused', async () => {
    await write0006State(state.db);
    await migrateToLatest();
    await adoptUnstampedState(state.db, ORG);
    expect((await migrator.migrateDown()).error).toBeUndefined();
    expect(await state.db.selectFrom('record_map').select(['source_key', 'api_id']).execute()).toEqual([
      { source_key: 'INV-1', api_id: 'inv_1' },
    ]);

    await migrateToLatest();
    await adoptUnstampedState(state.db, ORG);
    await syncStateRepos(state.db).recordMap.save(
      'erp-csv',
      'invoice',
      { sourceKey: 'INV-1', apiId: 'other', contentHash: 'h', syncedState: {} },
      null,
    );
    const { error } = await migrator.migrateDown();
    expect(String(error)).toContain(
      '1 keys of record_map are held in more than one connection or organization',
    );
  });
});
