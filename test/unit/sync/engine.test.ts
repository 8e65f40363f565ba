import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { ManualClock } from '../../../src/domain/clock.js';
import type { SourceRecord } from '../../../src/domain/records.js';
import { CsvParseFailure } from '../../../src/sources/csv/csv-rows.js';
import { replaySource } from '../../../src/sync/replay-source.js';
import { runPass, runSync, type SourceSummary } from '../../../src/sync/run-sync.js';
import {
  account,
  Crash,
  connectionReset,
  creditNote,
  FakeApi,
  FakeState,
  invoice,
  KilledError,
  trackedSource,
} from './fakes.js';

/**
 * The sync engine's decisions, through its ports only (`sync/ports.ts`): no Postgres, no Redis, no
 * HTTP. Each test is one row of the decision table: create / update / unchanged / adopt / refuse /
 * wait for the account / dry run, and resume after a crash between any two steps.
 */

const SOURCE = 'erp';
const logger = pino({ level: 'silent' });

type SourceFilter = FakeApi['sourceFilter'];
/** Every plausible meaning of the `/accounts` `source` filter (not shown in the spec). */
const FILTER_MEANINGS: SourceFilter[] = ['sourceId', 'connectionId', 'connectorType'];

function world(sourceFilter: SourceFilter = 'sourceId') {
  const crash = new Crash();
  const api = new FakeApi(crash);
  api.sourceFilter = sourceFilter;
  return { crash, api, state: new FakeState(crash), clock: new ManualClock('2026-11-24T09:00:00Z') };
}
type World = ReturnType<typeof world>;

function pass(
  w: World,
  records: readonly SourceRecord[],
  options: { dryRun?: boolean } = {},
): Promise<SourceSummary> {
  return runSync({
    source: replaySource(
      SOURCE,
      'test',
      records.map((record, i) => ({ record, origin: { file: 'rows.csv', line: i + 2 } })),
    ),
    connectionId: SOURCE,
    api: w.api,
    state: w.state,
    logger,
    clock: w.clock,
    concurrency: 1,
    ...(options.dryRun ? { dryRun: true } : {}),
  });
}

describe('the sync engine, decision by decision', () => {
  it('when an account is new, then it is created with its source in one request and its API id is kept', async () => {
    const w = world();
    const summary = await pass(w, [account(1)]);
    expect(summary.counts.accounts).toMatchObject({ created: 1, failed: 0 });
    expect(w.api.writes).toEqual(['createAccount']);
    const [created] = [...w.api.accounts.values()];
    expect(created!.source).toEqual({ connectionId: SOURCE, sourceId: 'A1', connectorType: 'Custom' });
    expect(w.state.mapped(SOURCE, 'account', 'A1')?.apiId).toBe(created!.id);
    expect(w.state.pendingKeys.size).toBe(0);
    expect(w.state.runRows.map((r) => r.status)).toEqual(['succeeded']);
  });

  it('when nothing changed since the last pass, then the pass makes no API call at all', async () => {
    const w = world();
    await pass(w, [account(1, { tags: ['vip'] }), invoice(1, 1), creditNote(1, 1)]);
    const calls = w.api.calls.length;
    const summary = await pass(w, [account(1, { tags: ['vip'] }), invoice(1, 1), creditNote(1, 1)]);
    expect(w.api.calls.length).toBe(calls);
    expect(summary.counts).toEqual({
      accounts: { created: 0, updated: 0, unchanged: 1, failed: 0 },
      invoices: { created: 0, updated: 0, unchanged: 1, failed: 0 },
      creditNotes: { created: 0, updated: 0, unchanged: 1, failed: 0 },
    });
  });

  it('when an account changed, then it is updated, its source lastUpdate set to the row time, and tags follow the row', async () => {
    const w = world();
    await pass(w, [account(1, { tags: ['vip', 'north'] })]);
    const summary = await pass(w, [
      account(1, { fullName: 'Renamed', tags: ['vip', 'south'], updatedAt: '2026-11-20T08:00:00.000Z' }),
    ]);
    expect(summary.counts.accounts.updated).toBe(1);
    const [remote] = [...w.api.accounts.values()];
    expect(remote!.fullName).toBe('Renamed');
    expect(remote!.lastUpdate).toBe('2026-11-20T08:00:00.000Z');
    expect(w.api.tagNamesOf(remote!.id)).toEqual(['south', 'vip']);
    expect(w.api.accounts.size).toBe(1);
  });

  it('when a changed row has no update time, then lastUpdate is the clock time of the pass', async () => {
    const w = world();
    await pass(w, [account(1)]);
    await pass(w, [account(1, { fullName: 'Renamed', updatedAt: null })]);
    expect([...w.api.accounts.values()][0]!.lastUpdate).toBe('2026-11-24T09:00:00.000Z');
  });

  it.each(FILTER_MEANINGS)(
    'when the service already holds the account (lost state), then it is adopted, never created twice (source filter compares %s)',
    async (meaning) => {
      const w = world(meaning);
      w.api.seedAccount(account(1), SOURCE);
      w.api.seedAccount(account(2, { fullName: 'Old name' }), SOURCE);
      const summary = await pass(w, [account(1), account(2), invoice(1, 1)]);
      expect(w.api.accounts.size).toBe(2);
      expect(summary.failures).toEqual([]);
      // The one that matches costs nothing more; the other is brought up to date.
      expect(summary.counts.accounts).toMatchObject({ unchanged: 1, updated: 1, created: 0 });
      expect(w.state.mapped(SOURCE, 'account', 'A1')?.apiId).toBe([...w.api.accounts.keys()][0]);
      expect(w.state.pendingKeys.size).toBe(0);
    },
  );

  it('when an account of the same source id belongs to another connection, then it is not adopted', async () => {
    const w = world();
    w.api.seedAccount(account(1), 'another-connection');
    await pass(w, [account(1)]);
    expect(w.api.accounts.size).toBe(2);
    expect(w.state.mapped(SOURCE, 'account', 'A1')?.apiId).not.toBe([...w.api.accounts.keys()][0]);
  });

  it('when the API refuses a record, then it is a failure with the status and code, and the rest of the pass goes on', async () => {
    const w = world();
    w.api.refuseNext = new ApiResponseError({
      status: 400,
      method: 'POST',
      path: '/accounts',
      apiCode: 'VALIDATION_FAILED',
      message: 'currencyCode is invalid',
    });
    const summary = await pass(w, [account(1), account(2)]);
    expect(summary.counts.accounts).toMatchObject({ created: 1, failed: 1 });
    expect([...w.state.failureRows.values()]).toMatchObject([
      {
        sourceKey: 'A1',
        status: 400,
        apiCode: 'VALIDATION_FAILED',
        retryable: false,
        line: 2,
        file: 'rows.csv',
      },
    ]);
    expect(summary.failures.map((f) => f.sourceKey)).toEqual(['A1']);
    expect(w.state.runRows.at(-1)!.status).toBe('partial');
    // The refused write's key is dropped: a corrected row is a new write.
    expect(w.state.pendingKeys.size).toBe(0);
  });

  it('when an invoice names an account not synced yet, then it waits (a retryable failure), and syncs once the account exists', async () => {
    const w = world();
    const first = await pass(w, [invoice(1, 7)]);
    expect(first.counts.invoices.failed).toBe(1);
    expect([...w.state.failureRows.values()]).toMatchObject([
      { kind: 'invoice', sourceKey: 'I1', stage: 'account', retryable: true, column: 'accountSourceId' },
    ]);
    expect(w.api.documents.size).toBe(0);
    const second = await pass(w, [account(7), invoice(1, 7)]);
    expect(second.counts.invoices.created).toBe(1);
    expect(w.state.failureRows.size).toBe(0);
  });

  it("when an invoice's account failed, then the invoice fails with the account's reason", async () => {
    const w = world();
    w.api.refuseNext = new ApiResponseError({
      status: 400,
      method: 'POST',
      path: '/accounts',
      message: 'bad country',
    });
    await pass(w, [account(1), invoice(1, 1)]);
    const reason = w.state.failureRows.get(`${SOURCE}\u0000invoice\u0000I1`);
    expect(reason?.message).toContain('account "A1" failed');
    expect(reason?.message).toContain('bad country');
  });

  it('when an invoice is paid, then by default it is created and then patched with its paid amount', async () => {
    const w = world();
    await pass(w, [account(1), invoice(1, 1, { paidAmount: '40' }), invoice(2, 1)]);
    expect(w.api.createdPaid).toEqual([undefined, undefined]);
    expect([...w.api.writes].sort()).toEqual([
      'createAccount',
      'createDocument',
      'createDocument',
      'patchDocument',
    ]);
    const paid = [...w.api.documents.values()].map((d) => d.paidAmount).sort();
    expect(paid).toEqual(['0.00', '40.00']);
  });

  it('when the server takes the paid amount at creation (createPaid), then a paid invoice costs one write', async () => {
    const w = world();
    w.api.createsPaid = true;
    const summary = await pass(w, [account(1), invoice(1, 1, { paidAmount: '40' }), invoice(2, 1)]);
    // The unpaid invoice sends no paid amount at all.
    expect(w.api.createdPaid.sort()).toEqual(['40.00', undefined]);
    expect(w.api.writes).toEqual(['createAccount', 'createDocument', 'createDocument']);
    expect(summary.counts.invoices).toMatchObject({ created: 2, failed: 0 });
    // The next pass sees nothing to do: the record map holds the paid amount as synced.
    const calls = w.api.calls.length;
    await pass(w, [account(1), invoice(1, 1, { paidAmount: '40' }), invoice(2, 1)]);
    expect(w.api.calls.length).toBe(calls);
  });

  it('when createPaid is set but the server ignores the field, then the answer gives it away and the paid amount is patched', async () => {
    const w = world();
    w.api.createsPaid = true;
    w.api.ignoresCreatedPaid = true;
    await pass(w, [account(1), invoice(1, 1, { paidAmount: '40' })]);
    expect(w.api.createdPaid).toEqual(['40.00']);
    expect(w.api.writes).toEqual(['createAccount', 'createDocument', 'patchDocument']);
    expect([...w.api.documents.values()][0]!.paidAmount).toBe('40.00');
  });

  it('when a document already exists on the service (lost state), then it is adopted and its paid amount patched', async () => {
    const w = world();
    await pass(w, [account(1), invoice(1, 1)]);
    const fresh = world();
    fresh.api.accounts.clear();
    for (const [id, a] of w.api.accounts) fresh.api.accounts.set(id, a);
    for (const [id, d] of w.api.documents) fresh.api.documents.set(id, d);
    const summary = await pass(fresh, [account(1), invoice(1, 1, { paidAmount: '50' })]);
    expect(fresh.api.writes).not.toContain('createDocument');
    expect(fresh.api.writes).toEqual(['patchDocument']);
    expect(summary.counts.invoices.updated).toBe(1);
    expect([...fresh.api.documents.values()][0]!.paidAmount).toBe('50.00');
  });

  it('when only the paid amount or due date of an invoice changed, then the document is patched', async () => {
    const w = world();
    await pass(w, [account(1), invoice(1, 1)]);
    const summary = await pass(w, [
      account(1),
      invoice(1, 1, { paidAmount: '120', dueDate: { year: 2026, month: 12, day: 31 } }),
    ]);
    expect(summary.counts.invoices.updated).toBe(1);
    const [doc] = [...w.api.documents.values()];
    expect(doc).toMatchObject({ paidAmount: '120.00', dueDate: { year: 2026, month: 12, day: 31 } });
  });

  it('when a field frozen at creation changed, then the document is refused with the reason, not re-created', async () => {
    const w = world();
    await pass(w, [account(1), invoice(1, 1)]);
    const summary = await pass(w, [account(1), invoice(1, 1, { totalAmount: '999.00' })]);
    expect(summary.counts.invoices.failed).toBe(1);
    expect(summary.failures[0]!.reason).toContain('frozen at creation');
    expect(w.api.documents.size).toBe(1);
  });

  it('when the account was relinked to another source on the service, then the update is refused with the reason', async () => {
    const w = world();
    await pass(w, [account(1)]);
    const [remote] = [...w.api.accounts.values()];
    remote!.source = { connectionId: 'other', sourceId: 'X9', connectorType: 'Custom' };
    const summary = await pass(w, [account(1, { fullName: 'Renamed' })]);
    expect(summary.counts.accounts.failed).toBe(1);
    expect(summary.failures[0]!.reason).toContain('linked to another source');
  });

  it('when a source marks an account deleted, then its source is unlinked and the account kept', async () => {
    const w = world();
    await pass(w, [account(1)]);
    await pass(w, [account(1, { deleted: true })]);
    expect([...w.api.accounts.values()][0]!.source).toBeNull();
    expect(w.api.accounts.size).toBe(1);
  });

  it('when the pass is a dry run, then it plans every write, sends none and records nothing', async () => {
    const w = world();
    const summary = await pass(w, [account(1), invoice(1, 1), creditNote(1, 1)], { dryRun: true });
    expect(summary.plan.map((p) => `${p.kind} ${p.sourceKey} ${p.operation}`)).toEqual([
      'account A1 create',
      'invoice I1 create',
      'creditNote C1 create',
    ]);
    expect(w.api.writes).toEqual([]);
    expect(w.state.rows.size).toBe(0);
    expect(w.state.runRows).toEqual([]);
  });

  it('when the same key comes twice in one batch, then both versions are synced in order, the last one wins', async () => {
    const w = world();
    await pass(w, [account(1, { fullName: 'First' }), account(1, { fullName: 'Second' })]);
    expect(w.api.accounts.size).toBe(1);
    expect([...w.api.accounts.values()][0]!.fullName).toBe('Second');
  });
});

describe('the sync engine, when a part it depends on fails', () => {
  /** The service down beyond the client's retries, as the engine receives it. */
  const serviceDown = () =>
    new ApiResponseError({ status: 503, method: 'POST', path: '/accounts', message: 'down' });
  const passProps = (w: World, source: ReturnType<typeof trackedSource>['source'], concurrency = 2) => ({
    source,
    connectionId: SOURCE,
    api: w.api,
    state: w.state,
    logger,
    clock: w.clock,
    concurrency,
  });

  const passOf = (w: World, source: ReturnType<typeof trackedSource>['source']) =>
    runSync(passProps(w, source));

  it('when the API keeps failing (5xx beyond the retries), then the pass stops, the unit is released, no row is blamed, the run says why', async () => {
    const w = world();
    const unavailable = serviceDown();
    w.api.faults.set('createAccount', unavailable);
    const { source, fate } = trackedSource(SOURCE, [account(1), account(2), account(3)]);
    await expect(passOf(w, source)).rejects.toBe(unavailable);
    expect(fate).toEqual({ completed: false, abandoned: null, released: true });
    expect(w.state.failureRows.size).toBe(0);
    expect(w.state.runRows).toMatchObject([{ status: 'failed' }]);

    const again = trackedSource(SOURCE, [account(1), account(2), account(3)]);
    const summary = await passOf(w, again.source);
    expect(again.fate.completed).toBe(true);
    expect(summary.failures).toEqual([]);
    expect(w.api.accounts.size).toBe(3);
  });

  it('when the API is unreachable or refuses the token during a lookup, then the pass stops, no row is blamed, nothing is created twice', async () => {
    for (const fault of [
      connectionReset(),
      new ApiResponseError({ status: 401, method: 'GET', path: '/accounts', message: 'invalid token' }),
    ]) {
      const w = world();
      // A lost state: the create of A1 is refused as a duplicate, and its lookup fails.
      w.api.seedAccount(account(1), SOURCE);
      w.api.faults.set('findAccountsBySourceIds', fault);
      const { source, fate } = trackedSource(SOURCE, [account(1), account(2)]);
      await expect(passOf(w, source)).rejects.toBe(fault);
      expect(fate.released).toBe(true);
      expect(fate.abandoned).toBeNull();
      expect(w.state.failureRows.size).toBe(0);

      const again = trackedSource(SOURCE, [account(1), account(2)]);
      expect((await passOf(w, again.source)).failures).toEqual([]);
      expect(w.api.accounts.size).toBe(2);
    }
  });

  it('when a fault stops the pass, then its outcome returns what it had done with the fault, as its run recorded it', async () => {
    const w = world();
    const unavailable = serviceDown();
    let created = 0;
    const create = w.api.createAccount.bind(w.api);
    w.api.createAccount = async (...args) => {
      if (++created === 3) throw unavailable;
      return create(...args);
    };
    const { source } = trackedSource(SOURCE, [account(1), account(2), account(3)]);
    const outcome = await runPass(passProps(w, source, 1));
    expect(outcome).toMatchObject({ stopped: true, error: unavailable, summary: { sourceId: SOURCE } });
    expect(outcome.summary.counts.accounts).toMatchObject({ created: 2, failed: 0 });
    expect(outcome.summary.runId).toBe(w.state.runRows[0]?.id);
    expect(w.state.runRows).toMatchObject([{ status: 'failed', counts: { accounts: { created: 2 } } }]);
  });

  it('when the state DB drops during the pass, then the pass stops and the unit is released', async () => {
    const w = world();
    const dropped = Object.assign(new Error('Connection terminated unexpectedly'), { code: '57P01' });
    const save = w.state.recordMap.save;
    let calls = 0;
    w.state.recordMap.save = async (...args) => {
      if (++calls === 2) throw dropped;
      return save(...args);
    };
    const { source, fate } = trackedSource(SOURCE, [account(1), account(2), account(3)]);
    await expect(passOf(w, source)).rejects.toBe(dropped);
    expect(fate).toMatchObject({ released: true, completed: false, abandoned: null });
  });

  it('when the unit itself cannot be read (its data), then it is abandoned with the reason and the pass goes on', async () => {
    const w = world();
    const { source, fate } = trackedSource(SOURCE, [account(1)], {
      failReading: new CsvParseFailure(3, 'CSV_QUOTE_NOT_CLOSED', 'Quote not closed at line 3'),
    });
    const summary = await passOf(w, source);
    expect(fate.abandoned).toBe('Quote not closed at line 3');
    expect(summary.abandoned).toEqual([{ unit: 'rows.csv', reason: 'Quote not closed at line 3' }]);
    expect(w.state.runRows).toMatchObject([{ status: 'partial' }]);
  });
});

describe('the sync engine, killed between any two steps', () => {
  const records = (): SourceRecord[] => [
    account(1, { tags: ['vip'] }),
    account(2),
    invoice(1, 1, { paidAmount: '30' }),
    invoice(2, 2),
    creditNote(1, 1),
  ];

  /** A clean pass, to count the steps a whole pass takes. */
  async function stepsOfAPass(): Promise<number> {
    const w = world('sourceId');
    await pass(w, records());
    return w.crash.calls;
  }

  it.each(FILTER_MEANINGS)(
    'when the process dies at any call, before or after the call takes effect, then a restart ends with every record once, complete (source filter compares %s)',
    async (meaning) => {
      const steps = await stepsOfAPass();
      expect(steps).toBeGreaterThan(20);
      const cases: string[] = [];
      for (let at = 1; at <= steps; at++) {
        for (const afterCommit of [false, true]) {
          const w = world(meaning);
          w.crash.at(at, afterCommit);
          await expect(pass(w, records())).rejects.toBeInstanceOf(KilledError);
          const killedAt = w.crash.steps.at(-1)!;
          w.crash.restart();
          const summary = await pass(w, records());
          const where = `killed at call ${at} (${killedAt}, ${afterCommit ? 'after' : 'before'} it took effect)`;
          cases.push(where);

          expect(summary.failures, where).toEqual([]);
          expect(w.api.accounts.size, where).toBe(2);
          expect([...w.api.documents.values()].map((d) => d.sourceId).sort(), where).toEqual([
            'C1',
            'I1',
            'I2',
          ]);
          const a1 = [...w.api.accounts.values()].find((a) => a.source?.sourceId === 'A1')!;
          expect(w.api.tagNamesOf(a1.id), where).toEqual(['vip']);
          expect(w.state.mapped(SOURCE, 'account', 'A1')?.apiId, where).toBe(a1.id);
          const i1 = [...w.api.documents.values()].find((d) => d.sourceId === 'I1')!;
          expect(i1.paidAmount, where).toBe('30.00');
          expect(w.state.mapped(SOURCE, 'invoice', 'I1')?.apiId, where).toBe(i1.id);
          expect(w.state.failureRows.size, where).toBe(0);
          expect(w.state.pendingKeys.size, where).toBe(0);

          // And from then on the data is at rest: one more pass costs no API call.
          const calls = w.api.calls.length;
          await pass(w, records());
          expect(w.api.calls.length, where).toBe(calls);
        }
      }
      expect(cases.length).toBe(steps * 2);
    },
  );
});
