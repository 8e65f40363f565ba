import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FailureInput, MappedRecord } from '../../../src/domain/sync-state.js';
import type { StateDatabase } from '../../../src/state/database.js';
import { DetailQueries } from '../../../src/state/detail-queries.js';
import { FailureQueries } from '../../../src/state/failure-queries.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { RunRecordsRepository } from '../../../src/state/run-records.js';
import { type StateScope, stateScopes } from '../../../src/state/scopes.js';
import { StatusQueries } from '../../../src/state/status-queries.js';
import { openStateOfKind } from '../../support/postgres.js';

const ORG_A: StateScope = { connectionId: 'default', organizationId: 'a0000000-0000-4000-8000-00000000000a' };
const ORG_B: StateScope = { connectionId: 'eu', organizationId: 'b0000000-0000-4000-8000-00000000000b' };

/** The repositories of a pass with `sourceId` synced into `scope`. */
const reposIn = (state: StateDatabase, sourceId: string, scope: StateScope) =>
  syncStateRepos(state.db, stateScopes(new Map([[sourceId, scope]])));

const mapped = (sourceKey: string, apiId: string, contentHash = 'h'): MappedRecord => ({
  sourceKey,
  apiId,
  contentHash,
  syncedState: {},
  record: { number: sourceKey },
});

const failure = (sourceId: string, sourceKey: string, message: string): FailureInput => ({
  sourceId,
  kind: 'invoice',
  sourceKey,
  stage: 'create',
  message,
  retryable: false,
});

/**
 * A source's state per connection and organization (its scope): the same source in two scopes
 * keeps two record maps, cursors, pending writes and open failures; without scopes, everything is
 * where it always was. One database per kind; each test has its own source.
 */
describe.each(['postgres', 'embedded'] as const)('state scopes in the %s state DB', (kind) => {
  let state: StateDatabase;
  beforeAll(async () => {
    state = await openStateOfKind(kind, 'scopes');
  }, 60_000);
  afterAll(() => state?.close());

  it('when a source moves to another organization and back, then it starts afresh there and finds its old record map again', async () => {
    const a = reposIn(state, 'erp-moved', ORG_A);
    const b = reposIn(state, 'erp-moved', ORG_B);
    await a.recordMap.save('erp-moved', 'invoice', mapped('INV-1', 'inv_a1', 'ha'), null);
    await a.recordMap.save('erp-moved', 'invoice', mapped('INV-2', 'inv_a2', 'ha'), null);

    const inB = await b.recordMap.diff('erp-moved', 'invoice', new Map([['INV-1', 'ha']]));
    expect([...inB.unknown]).toEqual(['INV-1']);
    expect(await b.recordMap.get('erp-moved', 'invoice', 'INV-1')).toBeUndefined();
    await b.recordMap.save('erp-moved', 'invoice', mapped('INV-1', 'inv_b1', 'hb'), null);
    await b.recordMap.resetHashes('erp-moved');

    expect(await a.recordMap.get('erp-moved', 'invoice', 'INV-1')).toMatchObject({
      apiId: 'inv_a1',
      contentHash: 'ha',
    });
    expect(await a.recordMap.fingerprints('erp-moved', 'invoice', 10)).toEqual(
      new Map([
        ['INV-1', 'ha'],
        ['INV-2', 'ha'],
      ]),
    );
    expect(await b.recordMap.fingerprints('erp-moved', 'invoice', 10)).toEqual(new Map([['INV-1', '']]));
    expect((await a.recordMap.count('erp-moved')).invoice).toBe(2);
    expect(await b.recordMap.countUpTo('erp-moved', 'invoice', 10)).toBe(1);
    expect((await b.recordMap.storedRecords('erp-moved')).map((r) => r.sourceKey)).toEqual(['INV-1']);
    expect(
      (await a.recordMap.linkedKeysPage('erp-moved', 'invoice', null, 10)).map((r) => r.sourceKey),
    ).toEqual(['INV-1', 'INV-2']);
  });

  it('when a source syncs into two scopes, then each keeps its own cursors, pending writes and open failures', async () => {
    const a = reposIn(state, 'erp-two', ORG_A);
    const b = reposIn(state, 'erp-two', ORG_B);
    await a.cursors.set('erp-two', 'invoices', { after: 'a' });
    expect(await b.cursors.get('erp-two', 'invoices')).toBeNull();
    await b.cursors.set('erp-two', 'invoices', { after: 'b' });
    expect(await b.cursors.reset('erp-two')).toEqual(['invoices']);
    expect(await a.cursors.get('erp-two', 'invoices')).toEqual({ after: 'a' });
    expect((await a.cursors.list('erp-two')).map((c) => c.cursor)).toEqual([{ after: 'a' }]);

    const ref = { sourceId: 'erp-two', kind: 'invoice' as const, sourceKey: 'INV-1', operation: 'create' };
    const keyA = await a.pending.begin(ref, 'body');
    const keyB = await b.pending.begin(ref, 'body');
    expect(keyB).not.toBe(keyA);
    expect(await a.pending.begin(ref, 'body')).toBe(keyA);
    await b.pending.forget(ref);
    expect(await a.pending.count('erp-two')).toBe(1);
    expect(await b.pending.count('erp-two')).toBe(0);

    await a.failures.recordMany([
      failure('erp-two', 'INV-1', 'refused by A'),
      failure('erp-two', 'INV-2', 'A'),
    ]);
    await b.failures.record(failure('erp-two', 'INV-1', 'refused by B'));
    expect(await a.failures.countOpen('erp-two')).toBe(2);
    expect((await b.failures.open({ sourceId: 'erp-two' })).map((f) => f.message)).toEqual(['refused by B']);
    await b.failures.resolve('erp-two', 'invoice', ['INV-1']);
    expect(await b.failures.openKinds('erp-two')).toEqual(new Set());
    expect(await a.failures.openKinds('erp-two')).toEqual(new Set(['invoice']));
    const [openInA] = await a.failures.open({ sourceId: 'erp-two', sourceKeys: ['INV-1'] });
    expect(openInA).toMatchObject({ message: 'refused by A', attempts: 1 });
    // Chosen by id, as the dashboard does (it lists every scope's failures, and its repositories
    // know no scope): dismissed whatever the reader's scope, once.
    const dashboard = syncStateRepos(state.db);
    expect(await dashboard.failures.dismiss('erp-two', [openInA!.id], { reason: 'fixed', by: 'me' })).toBe(1);
    expect(await a.failures.dismiss('erp-two', [openInA!.id], { reason: 'again', by: 'me' })).toBe(0);
    expect(await a.failures.countOpen('erp-two')).toBe(1);
    expect((await dashboard.failures.open({ sourceId: 'erp-two', ids: [openInA!.id] })).length).toBe(0);
  });

  it('when a run records what it touched, then the API ids come from its own scope, and its run carries that scope', async () => {
    const a = reposIn(state, 'erp-runs', ORG_A);
    const b = reposIn(state, 'erp-runs', ORG_B);
    await a.recordMap.save('erp-runs', 'invoice', mapped('INV-1', 'inv_a1'), null);
    await b.recordMap.save('erp-runs', 'invoice', mapped('INV-1', 'inv_b1'), null);
    const runId = await b.runs.start('erp-runs', 'once', false);
    await b.runRecords.record(runId, 'erp-runs', [
      { kind: 'invoice', sourceKey: 'INV-1', outcome: 'updated' },
    ]);
    await b.runs.finish(runId, 'succeeded', {});

    const { rows } = await new RunRecordsRepository(state.db).ofRun(runId, { offset: 0, limit: 10 });
    expect(rows.map((r) => r.apiId)).toEqual(['inv_b1']);
    const last = (await new StatusQueries(state.db).lastRuns()).get('erp-runs');
    expect(last).toMatchObject({
      id: runId,
      connectionId: ORG_B.connectionId,
      organizationId: ORG_B.organizationId,
    });
    expect(await new DetailQueries(state.db).run(runId)).toMatchObject(ORG_B);
    const touched = await new RunRecordsRepository(state.db).runsOf('erp-runs', 'invoice', 'INV-1');
    expect(touched).toMatchObject([{ runId, ...ORG_B }]);
  });

  it("when a failure is exported, then it comes with the record as synced in the failure's own scope", async () => {
    const a = reposIn(state, 'erp-export', ORG_A);
    const b = reposIn(state, 'erp-export', ORG_B);
    await a.recordMap.save(
      'erp-export',
      'invoice',
      { ...mapped('INV-1', 'inv_a1'), record: { in: 'A' } },
      null,
    );
    await b.recordMap.save(
      'erp-export',
      'invoice',
      { ...mapped('INV-1', 'inv_b1'), record: { in: 'B' } },
      null,
    );
    await b.failures.record(failure('erp-export', 'INV-1', 'refused by B'));

    const page = await new FailureQueries(state.db).exportPage('erp-export', 'invoice', '0', 10);
    expect(page).toMatchObject([{ sourceKey: 'INV-1', lastSynced: { in: 'B' } }]);
  });

  it('when no scopes are given, then every source is under the default connection with no organization, as before scopes', async () => {
    const unscoped = syncStateRepos(state.db);
    await unscoped.recordMap.save('erp-plain', 'invoice', mapped('INV-1', 'inv_1'), null);
    await unscoped.cursors.set('erp-plain', 'invoices', { after: 'x' });
    await unscoped.failures.record(failure('erp-plain', 'INV-2', 'HTTP 400'));
    const runId = await unscoped.runs.start('erp-plain', 'once', false);
    await unscoped.runs.finish(runId, 'partial', {});

    const scopes = await state.db
      .selectFrom('record_map')
      .select(['connection_id', 'organization_id'])
      .where('source_id', '=', 'erp-plain')
      .unionAll((db) =>
        db
          .selectFrom('cursors')
          .select(['connection_id', 'organization_id'])
          .where('source_id', '=', 'erp-plain'),
      )
      .unionAll((db) =>
        db
          .selectFrom('failures')
          .select(['connection_id', 'organization_id'])
          .where('source_id', '=', 'erp-plain'),
      )
      .unionAll((db) =>
        db
          .selectFrom('runs')
          .select(['connection_id', 'organization_id'])
          .where('source_id', '=', 'erp-plain'),
      )
      .execute();
    expect(scopes).toEqual(Array(4).fill({ connection_id: 'default', organization_id: '' }));
    // A scope naming the default connection with no organization is the same state.
    const same = reposIn(state, 'erp-plain', { connectionId: 'default', organizationId: '' });
    expect(await same.recordMap.get('erp-plain', 'invoice', 'INV-1')).toMatchObject({ apiId: 'inv_1' });
    expect(await same.failures.countOpen('erp-plain')).toBe(1);
  });
});
