import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import type { AccountRecord, InvoiceRecord, SourceRecord } from '../../../src/domain/records.js';
import { contentHash } from '../../../src/mapping/content-hash.js';
import { documentHash } from '../../../src/mapping/document-payload.js';
import type { Source, SourceBatch, SourceUnit } from '../../../src/sources/source.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { type SyncStateRepos, syncStateRepos } from '../../../src/state/repositories.js';
import type { SnapshotPolicy } from '../../../src/sync/fingerprint-snapshot.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

const logger = pino({ level: 'silent' });

const account = (i: number, city = 'Nantes'): AccountRecord => ({
  kind: 'account',
  sourceId: `C-${i}`,
  fullName: `Customer ${i}`,
  currencyCode: 'EUR',
  billingAddress: { street: `${i} quai`, city, postalCode: '44000', country: 'FR' },
  tags: [],
  updatedAt: null,
});

const invoice = (i: number, paidAmount: string | null = null): InvoiceRecord => ({
  kind: 'invoice',
  sourceId: `INV-${i}`,
  accountSourceId: `C-${(i % 3) + 1}`,
  number: `F-${i}`,
  issuedDate: { year: 2026, month: 1, day: 10 },
  dueDate: { year: 2026, month: 2, day: 9 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  billingAddress: null,
  file: null,
  paidAmount,
  updatedAt: null,
});

/** A source of units (one per list of records), in batches of `batchSize`. */
function listSource(id: string, units: SourceRecord[][], batchSize = 4): Source {
  return {
    id,
    type: 'test',
    async *units(): AsyncIterable<SourceUnit> {
      for (const [u, records] of units.entries()) {
        yield {
          name: `unit-${u}`,
          stream: records[0]?.kind === 'account' ? 'accounts' : 'invoices',
          async *batches(): AsyncIterable<SourceBatch> {
            for (let i = 0; i < records.length; i += batchSize)
              yield {
                records: records.slice(i, i + batchSize).map((record, k) => ({
                  record,
                  origin: { file: `unit-${u}`, line: i + k + 2 },
                })),
                rejected: [],
              };
          },
          complete: async () => {},
          abandon: async () => {},
          release: async () => {},
        };
      }
    },
  };
}

/** Every snapshot check passes: the snapshot is read from the first batch on. */
const EAGER: SnapshotPolicy = { minRows: 1, maxRatio: 1_000, limit: 1_000_000 };
/** No snapshot: every batch is compared by query. */
const NEVER: SnapshotPolicy = { minRows: Number.POSITIVE_INFINITY, maxRatio: 1, limit: 0 };

describe.each(['embedded', 'postgres'] as const)('the diff against the %s state DB', (kind) => {
  let sandbox: TestSandbox;
  let state: StateDatabase;
  let schema: string | undefined;
  let dir: string;
  let repos: SyncStateRepos;
  let client: ReceivablesClient;
  /** This test's source: its own record-map rows, synced to its own sandbox. */
  let sourceId: string;
  let sources = 0;
  const writes = { count: 0 };

  const pass = (units: SourceRecord[][], snapshotPolicy: SnapshotPolicy) =>
    runSync({
      source: listSource(sourceId, units),
      connectionId: sourceId,
      api: new ClientSyncApi(client, sandbox.organizationId),
      state: repos,
      logger,
      snapshotPolicy,
    });

  const remoteInvoice = async (key: string) => {
    const found = await sandbox.call('GET', '/invoices', {
      query: { organizationId: sandbox.organizationId, filters: `sourceId:isAnyOf:${key}` },
    });
    return found.body.nodes[0];
  };

  // One state DB per kind (opening one costs seconds); each test writes under a source of its own.
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rs-diff-'));
    schema = kind === 'postgres' ? uniqueSchema('diff') : undefined;
    state = await openStateDatabase({
      databaseUrl: kind === 'postgres' ? TEST_DATABASE_URL : null,
      dataDir: join(dir, 'state'),
      ...(schema ? { schema } : {}),
    });
  });
  afterAll(async () => {
    await state?.close();
    if (schema) await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  // Every test starts from the same synced data: 3 accounts and 10 invoices, first synced by a pass.
  beforeEach(async () => {
    sourceId = `erp-${++sources}`;
    sandbox = await startTestSandbox();
    repos = syncStateRepos(state.db);
    client = new ReceivablesClient({
      baseUrl: sandbox.baseUrl,
      tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
      limiter: createRateLimiter({ logger }),
      logger,
      fetch: (input, init) => {
        if ((init?.method ?? 'GET') !== 'GET') writes.count++;
        return fetch(input, init);
      },
    });
    const first = await pass(
      [[1, 2, 3].map((i) => account(i)), Array.from({ length: 10 }, (_, i) => invoice(i + 1))],
      NEVER,
    );
    expect(first.failures).toEqual([]);
    expect(first.counts.invoices.created).toBe(10);
    writes.count = 0;
  });
  afterEach(async () => {
    await client?.close();
    await sandbox?.close();
  });

  it.each([
    ['read per batch', NEVER],
    ['read from a snapshot', EAGER],
  ] as const)(
    'when nothing changed (%s), then every record is unchanged and nothing is written',
    async (_, policy) => {
      writes.count = 0;
      const summary = await pass(
        [[3, 2, 1].map((i) => account(i)), Array.from({ length: 10 }, (_, i) => invoice(10 - i))],
        policy,
      );
      expect(summary.counts.accounts).toMatchObject({ unchanged: 3, created: 0, updated: 0, failed: 0 });
      expect(summary.counts.invoices).toMatchObject({ unchanged: 10, created: 0, updated: 0, failed: 0 });
      expect(writes.count).toBe(0);
    },
  );

  it('when a snapshot was read and one pass changes a record and then changes it back, then the API ends with the last version', async () => {
    // unit 1 pays INV-2; unit 2 holds INV-2 as first synced (nothing paid), which the snapshot
    // still holds: it must not be taken as unchanged, since the pass itself wrote INV-2.
    const summary = await pass(
      [
        [invoice(1), invoice(2, '50.00'), invoice(3)],
        [invoice(1), invoice(2), invoice(3)],
      ],
      EAGER,
    );
    expect(summary.failures).toEqual([]);
    expect(summary.counts.invoices).toMatchObject({ updated: 2, unchanged: 4 });
    expect((await remoteInvoice('INV-2')).paidAmount).toBe('0.00');
    const stored = (await repos.recordMap.get(sourceId, 'invoice', 'INV-2'))!;
    expect(stored.contentHash).toBe(documentHash(invoice(2)));
  });

  it('when a stored fingerprint has another form (an older version) but the record did not change, then it is rewritten without any API call', async () => {
    const oldForm = contentHash({ legacy: 'INV-4' });
    await state.db
      .updateTable('record_map')
      .set({ content_hash: oldForm })
      .where('source_id', '=', sourceId)
      .where('source_key', '=', 'INV-4')
      .execute();
    writes.count = 0;
    const summary = await pass([[invoice(4)]], NEVER);
    expect(summary.counts.invoices).toMatchObject({ unchanged: 1, updated: 0 });
    expect(writes.count).toBe(0);
    expect((await repos.recordMap.get(sourceId, 'invoice', 'INV-4'))!.contentHash).toBe(
      documentHash(invoice(4)),
    );
  });

  it('when the record stored beside an older fingerprint cannot be read, then the record is compared the usual way', async () => {
    await state.db
      .updateTable('record_map')
      .set({ content_hash: 'legacy', record: JSON.stringify({ kind: 'invoice' }) })
      .where('source_id', '=', sourceId)
      .where('source_key', '=', 'INV-9')
      .execute();
    writes.count = 0;
    const summary = await pass([[invoice(9)]], NEVER);
    expect(summary.failures).toEqual([]);
    expect(summary.counts.invoices).toMatchObject({ updated: 1, failed: 0 });
    // Nothing to send: the paid amount and due date already match what was synced.
    expect(writes.count).toBe(0);
    expect((await repos.recordMap.get(sourceId, 'invoice', 'INV-9'))!.contentHash).toBe(
      documentHash(invoice(9)),
    );
  });

  it('when fingerprints were reset for a full re-sync, then the records are compared again, not skipped', async () => {
    await repos.recordMap.resetHash(sourceId, 'invoice', ['INV-5']);
    const summary = await pass([[invoice(5)]], EAGER);
    expect(summary.counts.invoices).toMatchObject({ updated: 1, unchanged: 0 });
    expect((await repos.recordMap.get(sourceId, 'invoice', 'INV-5'))!.contentHash).toBe(
      documentHash(invoice(5)),
    );
  });

  it('when a batch holds the same key twice, then both versions are synced in order', async () => {
    const summary = await pass([[invoice(6, '10.00'), invoice(6, '20.00')]], NEVER);
    expect(summary.failures).toEqual([]);
    expect(summary.counts.invoices).toMatchObject({ updated: 2 });
    expect((await remoteInvoice('INV-6')).paidAmount).toBe('20.00');
  });

  it('when records are new, changed and unchanged in one batch, then the diff tells them apart', async () => {
    const map = repos.recordMap;
    const diff = await map.diff(
      sourceId,
      'invoice',
      new Map([
        ['INV-7', documentHash(invoice(7))],
        ['INV-8', documentHash(invoice(8, '1.00'))],
        ['INV-404', documentHash(invoice(404))],
      ]),
    );
    expect([...diff.unknown]).toEqual(['INV-404']);
    expect([...diff.changed.keys()]).toEqual(['INV-8']);
    expect(diff.changed.get('INV-8')).toMatchObject({ contentHash: documentHash(invoice(8)) });
    expect(diff.changed.get('INV-8')!.record).toMatchObject({ sourceId: 'INV-8', number: 'F-8' });
  });

  it('when keys hold the separator characters, then the diff and the snapshot still tell the truth', async () => {
    const map = repos.recordMap;
    const odd = 'K\u001fodd\u001ekey';
    await map.save(
      sourceId,
      'creditNote',
      { sourceKey: odd, apiId: 'cn_1', contentHash: 'h1', syncedState: {} },
      null,
    );
    await map.save(
      sourceId,
      'creditNote',
      { sourceKey: 'plain', apiId: 'cn_2', contentHash: 'h2', syncedState: {} },
      null,
    );
    const diff = await map.diff(
      sourceId,
      'creditNote',
      new Map([
        [odd, 'h1'],
        ['plain', 'other'],
      ]),
    );
    expect([...diff.changed.keys()]).toEqual(['plain']);
    expect(diff.unknown.size).toBe(0);
    // An empty key alone: string_to_array('') would be no key at all.
    await map.save(
      sourceId,
      'creditNote',
      { sourceKey: '', apiId: 'cn_3', contentHash: 'h3', syncedState: {} },
      null,
    );
    const empty = await map.diff(sourceId, 'creditNote', new Map([['', 'other']]));
    expect(empty.unknown.size).toBe(0);
    expect([...empty.changed.keys()]).toEqual(['']);
    // A snapshot cannot be joined safely: none is read, and the per-batch queries are used.
    expect(await map.fingerprints(sourceId, 'creditNote', 10)).toBeNull();
  });

  it('when many rows were written, then the record map is vacuumed and its statistics refreshed, once', async () => {
    const map = repos.recordMap;
    expect(await map.maintainIfGrown(5)).toBe(true);
    const { rows } = await sql<{
      reltuples: number;
    }>`select reltuples from pg_class where oid = 'record_map'::regclass`.execute(state.db);
    expect(Number(rows[0]!.reltuples)).toBeGreaterThanOrEqual(13);
    expect(await map.maintainIfGrown(5)).toBe(false);
  });

  it('when the record map holds more fingerprints than asked for, then no snapshot is read', async () => {
    const map = repos.recordMap;
    expect(await map.fingerprints(sourceId, 'account', 2)).toBeNull();
    const all = await map.fingerprints(sourceId, 'account', 3);
    expect([...all!.keys()].sort()).toEqual(['C-1', 'C-2', 'C-3']);
  });
});
