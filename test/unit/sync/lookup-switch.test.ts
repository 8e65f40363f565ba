import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { ManualClock } from '../../../src/domain/clock.js';
import type { SourceRecord } from '../../../src/domain/records.js';
import { BatchRemotes } from '../../../src/sync/lookup-switch.js';
import { replaySource } from '../../../src/sync/replay-source.js';
import { runSync, type SourceSummary } from '../../../src/sync/run-sync.js';
import {
  account,
  Crash,
  connectionReset,
  creditNote,
  FakeApi,
  FakeState,
  invoice,
  KilledError,
} from './fakes.js';

/**
 * Create first, look up first: records the record map does not know are created (a duplicate
 * answer is looked up and adopted) until one create meets a record the service holds; from then
 * on the pass looks them up in batches of 50 before creating. In-memory fakes of the ports.
 */

const SOURCE = 'erp';
const logger = pino({ level: 'silent' });
const range = (n: number, from = 1) => Array.from({ length: n }, (_, k) => k + from);
const LOOKUPS = ['findAccountsBySourceIds', 'findDocumentsBySourceIds', 'listLinkedAccounts'];

/** A refusal for the row's data (not a duplicate): the account's name is too long. */
const tooLongName = () =>
  new ApiResponseError({
    status: 400,
    method: 'POST',
    path: '/accounts',
    apiCode: 'VALIDATION_FAILED',
    message: 'fullName: too long',
  });

function world() {
  const crash = new Crash();
  return {
    crash,
    api: new FakeApi(crash),
    state: new FakeState(crash),
    clock: new ManualClock('2026-11-24T09:00:00Z'),
  };
}
type World = ReturnType<typeof world>;

function pass(
  w: World,
  records: readonly SourceRecord[],
  options: { concurrency?: number; batchSize?: number; dryRun?: boolean } = {},
): Promise<SourceSummary> {
  return runSync({
    source: replaySource(
      SOURCE,
      'test',
      records.map((record, i) => ({ record, origin: { file: 'rows.csv', line: i + 2 } })),
      options.batchSize,
    ),
    connectionId: SOURCE,
    api: w.api,
    state: w.state,
    logger,
    clock: w.clock,
    concurrency: options.concurrency ?? 1,
    ...(options.dryRun ? { dryRun: true } : {}),
  });
}

const lookupsOf = (w: World) => w.api.calls.filter((c) => LOOKUPS.includes(c)).length;
const fullData = (n: number): SourceRecord[] => [
  ...range(n).map((i) => account(i)),
  ...range(n).map((i) => invoice(i, i)),
  ...range(n).map((i) => creditNote(i, i)),
];

/** The service's records of a world, copied into a new world with an empty state DB (a lost state). */
function lostState(from: World): World {
  const fresh = world();
  // Ids of their own, so that the new world's ids never meet them.
  for (const [id, a] of from.api.accounts)
    fresh.api.accounts.set(`old-${id}`, { ...structuredClone(a), id: `old-${id}` });
  for (const [id, d] of from.api.documents)
    fresh.api.documents.set(`old-${id}`, {
      ...structuredClone(d),
      id: `old-${id}`,
      accountId: `old-${d.accountId}`,
    });
  return fresh;
}

describe('records the state DB does not know: create first, switch to lookups on a duplicate', () => {
  it('when a source syncs for the first time, then every record costs one create and no lookup', async () => {
    const w = world();
    const summary = await pass(w, fullData(120), { concurrency: 8 });
    expect(summary.failures).toEqual([]);
    expect(lookupsOf(w)).toBe(0);
    expect(w.api.calls.length).toBe(360);
    expect(w.api.accounts.size + w.api.documents.size).toBe(360);
  });

  it('when a source that synced before gets new records, then they are created without a lookup', async () => {
    const w = world();
    await pass(w, fullData(10));
    const before = w.api.calls.length;
    await pass(w, [...fullData(10), account(11), invoice(11, 11), creditNote(11, 1)]);
    expect(w.api.calls.slice(before)).toEqual(['createAccount', 'createDocument', 'createDocument']);
  });

  it('when the state DB was lost after a full sync, then nothing is created twice and the pass switches to batched lookups after the first duplicate', async () => {
    const synced = world();
    await pass(synced, fullData(120));
    const w = lostState(synced);
    const summary = await pass(w, fullData(120));

    expect(summary.failures).toEqual([]);
    expect(summary.counts.accounts).toMatchObject({ created: 0, unchanged: 120 });
    expect(summary.counts.invoices).toMatchObject({ created: 0, unchanged: 120 });
    expect(summary.counts.creditNotes).toMatchObject({ created: 0, unchanged: 120 });
    expect(w.api.accounts.size).toBe(120);
    expect(w.api.documents.size).toBe(240);
    expect(w.api.writes).toEqual([]);
    // One refused create and its recovery lookup, then the 119 other accounts in 3 lookups of at
    // most 50, then 3 lookups for each kind of document: 11 calls for 360 records.
    expect(w.api.calls).toEqual([
      'createAccount',
      'findAccountsBySourceIds',
      ...Array(3).fill('findAccountsBySourceIds'),
      ...Array(6).fill('findDocumentsBySourceIds'),
    ]);
    expect(w.state.mapped(SOURCE, 'invoice', 'I7')?.apiId).toBe(
      [...w.api.documents.values()].find((d) => d.sourceId === 'I7')!.id,
    );
    expect(w.state.pendingKeys.size).toBe(0);
  });

  it('when records are written 8 at once and the state was lost, then the first create goes alone: one refused create, the rest looked up', async () => {
    const synced = world();
    await pass(synced, fullData(200));
    const w = lostState(synced);
    const summary = await pass(w, fullData(200), { concurrency: 8 });
    expect(summary.failures).toEqual([]);
    expect(w.api.accounts.size).toBe(200);
    expect(w.api.documents.size).toBe(400);
    expect(w.api.writes).toEqual([]);
    expect(w.api.calls.filter((c) => c.startsWith('create'))).toEqual(['createAccount']);
    // The refused create, its recovery, 4 lookups for the 199 other accounts, 4 + 4 for documents.
    expect(w.api.calls).toHaveLength(2 + 4 + 8);
  });

  it('when the API is unreachable, then only the first create is sent (the others wait for its answer) and the pass stops', async () => {
    const w = world();
    const unreachable = connectionReset();
    w.api.faults.set('createAccount', unreachable);
    await expect(pass(w, fullData(20), { concurrency: 8 })).rejects.toBe(unreachable);
    expect(w.api.calls).toEqual(['createAccount']);
    expect(w.state.failureRows.size).toBe(0);
    // Once it is back, the next pass creates everything, once.
    const summary = await pass(w, fullData(20), { concurrency: 8 });
    expect(summary.failures).toEqual([]);
    expect(w.api.accounts.size + w.api.documents.size).toBe(60);
  });

  it('when the first create is refused for its data, then the others go on at full concurrency', async () => {
    const w = world();
    w.api.refuseNext = tooLongName();
    const summary = await pass(
      w,
      range(20).map((i) => account(i)),
      { concurrency: 8 },
    );
    expect(summary.counts.accounts).toMatchObject({ created: 19, failed: 1 });
  });

  it('when only some records are on the service (a restored, older state DB), then the known ones are compared, the others adopted or created once', async () => {
    const w = world();
    await pass(w, fullData(60));
    const restored = structuredClone([...w.state.rows]);
    await pass(w, [...fullData(60), ...range(40, 61).map((i) => account(i))]);
    // The state goes back to before the second pass: accounts 61-100 are on the service only.
    w.state.rows.clear();
    for (const [k, row] of restored) w.state.rows.set(k, row);
    const before = w.api.calls.length;
    const summary = await pass(w, [...fullData(60), ...range(50, 61).map((i) => account(i))]);
    expect(summary.failures).toEqual([]);
    expect(summary.counts.accounts).toMatchObject({ created: 10, unchanged: 100 });
    expect(w.api.accounts.size).toBe(110);
    // The first of the 50 unknown accounts was refused and adopted; the 49 others were looked up.
    expect(w.api.calls.slice(before)).toEqual([
      'createAccount',
      'findAccountsBySourceIds',
      'findAccountsBySourceIds',
      ...Array(10).fill('createAccount'),
    ]);
  });

  it('when a create is refused for its data (not a duplicate), then the pass goes on creating first', async () => {
    const w = world();
    w.api.refuseNext = tooLongName();
    const summary = await pass(
      w,
      range(5).map((i) => account(i)),
    );
    expect(summary.counts.accounts).toMatchObject({ created: 4, failed: 1 });
    // The refusal is looked up once (it may have been a duplicate), the next ones are not.
    expect(w.api.calls).toEqual([
      'createAccount',
      'findAccountsBySourceIds',
      'listLinkedAccounts',
      ...Array(4).fill('createAccount'),
    ]);
  });

  it('when the switch comes in the middle of the pass, then the later batches and kinds look up first too', async () => {
    const synced = world();
    await pass(synced, [account(1), invoice(1, 1)]);
    const w = lostState(synced);
    // Account A1 and invoice I1 exist; the rest is new. Batches of 10.
    const records = [...range(30).map((i) => account(i)), ...range(30).map((i) => invoice(i, i))];
    const summary = await pass(w, records, { batchSize: 10 });
    expect(summary.failures).toEqual([]);
    expect(w.api.accounts.size).toBe(30);
    expect(w.api.documents.size).toBe(30);
    const lookups = w.api.calls.filter((c) => c.startsWith('find'));
    // The recovery of A1, then one lookup of the 9 other accounts of its batch, one per later
    // batch: 3 + 3 for invoices (looked up first: I1 is found and adopted, no refused create).
    expect(lookups).toEqual([
      ...Array(4).fill('findAccountsBySourceIds'),
      ...Array(3).fill('findDocumentsBySourceIds'),
    ]);
    expect(w.api.calls.filter((c) => c === 'createDocument')).toHaveLength(29);
  });

  it('when a deleted account is unknown to the state, then it is looked up and unlinked, even when creating first', async () => {
    const w = world();
    w.api.seedAccount(account(1), SOURCE);
    const summary = await pass(w, [account(1, { deleted: true }), account(2)]);
    expect(summary.counts.accounts).toMatchObject({ updated: 1, created: 1 });
    expect([...w.api.accounts.values()].find((a) => a.fullName === 'Customer 1')!.source).toBeNull();
    expect(w.api.calls).toEqual(['findAccountsBySourceIds', 'unlinkAccountSource', 'createAccount']);
  });

  it('when a document the state does not know has no account to be created with, then it is still looked up and adopted if the service holds it', async () => {
    const w = world();
    const orphan = w.api.seedAccount(account(9), SOURCE);
    orphan.source = null; // unlinked on the service since: the lookup of A9 finds nothing
    w.api.documents.set('doc-old', {
      kind: 'invoice',
      id: 'doc-old',
      sourceId: 'I1',
      accountId: orphan.id,
      number: 'INV-1',
      paidAmount: '0.00',
      dueDate: { year: 2026, month: 11, day: 1 },
      readOnlyReason: null,
    });
    const summary = await pass(w, [invoice(1, 9), invoice(2, 9)]);
    expect(summary.counts.invoices).toMatchObject({ unchanged: 1, failed: 1 });
    expect(summary.failures.map((f) => f.sourceKey)).toEqual(['I2']);
    expect(w.state.mapped(SOURCE, 'invoice', 'I1')?.apiId).toBe('doc-old');
    expect(w.api.writes).toEqual([]);
  });

  it('when the pass is a dry run, then it looks up first, so a lost state plans adoptions, not creations', async () => {
    const synced = world();
    await pass(synced, [account(1), invoice(1, 1)]);
    const w = lostState(synced);
    const summary = await pass(w, [account(1), invoice(1, 1), account(2)], { dryRun: true });
    expect(summary.plan.map((p) => `${p.operation} ${p.sourceKey}`)).toEqual(['create A2']);
    expect(w.api.writes).toEqual([]);
  });

  it('when the process died after a create took effect, then the restart replays it with the same key: no duplicate, no lookup', async () => {
    const w = world();
    const createAt = await (async () => {
      const probe = world();
      await pass(probe, [account(1), invoice(1, 1)]);
      return probe.crash.steps.indexOf('api.createDocument') + 1;
    })();
    w.crash.at(createAt, true);
    await expect(pass(w, [account(1), invoice(1, 1)])).rejects.toBeInstanceOf(KilledError);
    w.crash.restart();
    const before = w.api.calls.length;
    const summary = await pass(w, [account(1), invoice(1, 1)]);
    expect(summary.failures).toEqual([]);
    expect(w.api.documents.size).toBe(1);
    expect(w.api.calls.slice(before)).toEqual(['createDocument']);
    expect(w.api.writes.filter((c) => c === 'createDocument')).toHaveLength(1);
    expect(w.state.pendingKeys.size).toBe(0);
  });

  it('when a create after a crash carries another body (the row changed), then the duplicate is adopted and brought up to date', async () => {
    const w = world();
    w.api.faults.set('createAccount', new Error('unreachable'));
    await pass(w, [account(1)]).catch(() => undefined);
    w.api.seedAccount(account(1), SOURCE);
    const summary = await pass(w, [account(1, { fullName: 'Renamed' })]);
    expect(summary.counts.accounts).toMatchObject({ updated: 1, created: 0 });
    expect(w.api.accounts.size).toBe(1);
    expect([...w.api.accounts.values()][0]!.fullName).toBe('Renamed');
    expect(w.state.pendingKeys.size).toBe(0);
  });
});

describe('BatchRemotes', () => {
  const finder = () => {
    const asked: string[][] = [];
    const find = async (keys: string[]) => {
      asked.push(keys);
      return new Map(keys.filter((k) => k.startsWith('old')).map((k) => [k, `remote ${k}`]));
    };
    return { asked, find };
  };

  it('when the pass looks up first, then the whole batch is looked up before any record asks', async () => {
    const { asked, find } = finder();
    const remotes = await BatchRemotes.prepare({
      unknown: ['old1', 'new1'],
      modes: { lookUpFirst: true },
      find,
    });
    expect(asked).toEqual([['old1', 'new1']]);
    expect(await remotes.get('old1')).toBe('remote old1');
    expect(await remotes.get('new1')).toBeUndefined();
    expect(asked).toHaveLength(1);
  });

  it('when the pass creates first, then no lookup is made but for the records that always need one', async () => {
    const { asked, find } = finder();
    const remotes = await BatchRemotes.prepare({
      unknown: ['old1', 'old2', 'new1'],
      alwaysLookUp: ['old2'],
      modes: { lookUpFirst: false },
      find,
    });
    expect(await remotes.get('old1')).toBeUndefined();
    expect(await remotes.get('old2')).toBe('remote old2');
    expect(await remotes.get('new1')).toBeUndefined();
    expect(asked).toEqual([['old2']]);
  });

  it('when the pass switches during the batch, then the records that have not asked yet are looked up in one go', async () => {
    const { asked, find } = finder();
    const modes = { lookUpFirst: false };
    const remotes = await BatchRemotes.prepare({ unknown: ['old1', 'old2', 'new1', 'old3'], modes, find });
    expect(await remotes.get('old1')).toBeUndefined();
    modes.lookUpFirst = true;
    expect(await remotes.get('old2')).toBe('remote old2');
    expect(await remotes.get('new1')).toBeUndefined();
    expect(await remotes.get('old3')).toBe('remote old3');
    expect(asked).toEqual([['old2', 'new1', 'old3']]);
  });
});
