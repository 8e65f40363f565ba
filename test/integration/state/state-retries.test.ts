import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateDatabase } from '../../../src/state/database.js';
import { type SyncStateRepos, syncStateRepos } from '../../../src/state/repositories.js';
import { UNSTAMPED_SCOPES } from '../../../src/state/scopes.js';
import { StateCalls } from '../../../src/state/state-calls.js';
import { openStateOfKind } from '../../support/postgres.js';

/**
 * Runs each `retried` statement twice, as when a first attempt took effect and its answer was lost
 * with its connection: what the repositories retry must then do what one attempt does.
 */
class AnswerLostCalls extends StateCalls {
  readonly retriedNames = new Set<string>();

  override async retried<T>(name: string, statement: () => Promise<T>): Promise<T> {
    this.retriedNames.add(name);
    await statement();
    return statement();
  }
}

const ref = { sourceId: 'erp', kind: 'invoice' as const, sourceKey: 'INV-1', operation: 'create' };

describe.each(['postgres', 'embedded'] as const)(
  'state DB statements run again in the %s state DB',
  (kind) => {
    let state: StateDatabase;
    let calls: AnswerLostCalls;
    let repos: SyncStateRepos;
    beforeEach(async () => {
      state = await openStateOfKind(kind, 'retries');
      calls = new AnswerLostCalls();
      repos = syncStateRepos(state.db, UNSTAMPED_SCOPES, calls);
      repos.runs.holdRunLocks();
    });
    afterEach(async () => {
      await repos.runs.releaseRunLocks();
      await state.close();
    });

    const pendingRows = () =>
      state.db.selectFrom('pending_writes').select(['idempotency_key', 'attempts']).execute();

    it('when the answers of a pass’s statements are lost once each, then the state is what one attempt each leaves', async () => {
      const runId = await repos.runs.start('erp', 'once', false);
      expect(await repos.runs.recent('erp')).toHaveLength(1);

      const first = await repos.pending.begin(ref, 'body-1');
      expect(await repos.pending.begin(ref, 'body-1')).toBe(first);
      expect(await pendingRows()).toEqual([{ idempotency_key: first, attempts: 2 }]);
      const second = await repos.pending.begin(ref, 'body-2');
      expect(second).not.toBe(first);
      expect(await pendingRows()).toEqual([{ idempotency_key: second, attempts: 1 }]);

      const record = { sourceKey: 'INV-1', apiId: 'api-1', contentHash: 'h1', syncedState: { paid: '0' } };
      await repos.recordMap.save('erp', 'invoice', record, runId, { completing: second });
      expect(await repos.pending.count('erp')).toBe(0);
      expect(await repos.recordMap.getMany('erp', 'invoice', ['INV-1'])).toEqual(
        new Map([['INV-1', { ...record }]]),
      );
      expect(await repos.recordMap.resetHashes('erp')).toBe(1);

      await repos.cursors.set('erp', 'invoices', { after: 'INV-1' });
      expect(await repos.cursors.get('erp', 'invoices')).toEqual({ after: 'INV-1' });

      await repos.failures.record({
        sourceId: 'erp',
        kind: 'invoice',
        sourceKey: 'INV-2',
        stage: 'create',
        message: 'HTTP 503',
        retryable: true,
      });
      await repos.failures.resolve('erp', 'invoice', ['INV-2']);
      expect(await repos.failures.countOpen('erp')).toBe(0);

      expect(await repos.runs.requestCancel(runId, 'ada')).toBe(true);
      expect(await repos.runs.cancelRequest(runId)).toBe('ada');
      await repos.runs.addToCounts(runId, { unread: 1 });
      await repos.runs.finish(runId, 'succeeded', { accounts: 0, unread: 1 });
      const [run] = await repos.runs.recent('erp');
      expect(run).toMatchObject({ id: runId, status: 'succeeded', counts: { accounts: 0, unread: 1 } });
      expect(await repos.runs.recent('erp')).toHaveLength(1);
      const { n } = await sql<{ n: number }>`select count(*)::int as n from runs`
        .execute(state.db)
        .then((r) => r.rows[0]!);
      expect(n).toBe(1);

      // What runs once is named too: it adds up (failures), or inserts rows under new ids.
      expect(calls.retriedNames).not.toContain('failures.record');
      expect(calls.retriedNames).not.toContain('runRecords.record');
    });
  },
);
