import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import type { SourceRecord } from '../../../src/domain/records.js';
import type { SandboxCompat } from '../../../src/sandbox/options.js';
import type { StateDatabase } from '../../../src/state/database.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { replaySource } from '../../../src/sync/replay-source.js';
import { runSync, type SourceSummary } from '../../../src/sync/run-sync.js';
import { openStateOfKind } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { account, creditNote, invoice } from '../../unit/sync/fakes.js';

/**
 * What a first sync and a re-sync after a lost state DB cost, in HTTP requests to the sandbox, with
 * the real Postgres state DB: a new source's records are created without any lookup (one request a
 * record); a pass whose state DB was lost creates nothing twice, switching to batched lookups as
 * soon as a create meets a record the service holds, whatever status the server gives a duplicate.
 */

const logger = pino({ level: 'silent' });
const SOURCE = 'erp';
const range = (n: number, from = 1) => Array.from({ length: n }, (_, k) => k + from);

/** A document's account: one of the first 20, whatever the size of the dataset (it is frozen). */
const owner = (i: number) => ((i - 1) % 20) + 1;

/** `accounts` accounts (at least 20), twice as many invoices, half as many credit notes. */
const dataset = (accounts: number): SourceRecord[] => [
  ...range(accounts).map((i) => account(i)),
  ...range(accounts * 2).map((i) => invoice(i, owner(i))),
  ...range(accounts / 2).map((i) => creditNote(i, owner(i))),
];

interface Counted {
  summary: SourceSummary;
  lookups: number;
  writes: number;
}

describe.each<SandboxCompat['duplicateSourceStatus']>([400, 409, 422])(
  'first sync and lost state DB, when the server answers a duplicate with %s',
  (duplicateSourceStatus) => {
    let sandbox: TestSandbox;
    const opened: StateDatabase[] = [];

    beforeEach(async () => {
      sandbox = await startTestSandbox({
        rateLimit: { quota: 1_000_000, windowSeconds: 60 },
        compat: { duplicateSourceStatus },
      });
    });
    afterEach(async () => {
      await sandbox.close();
      for (const state of opened.splice(0)) await state.close();
    });

    const freshState = async () => {
      const state = await openStateOfKind('postgres', 'lookups');
      opened.push(state);
      return syncStateRepos(state.db);
    };

    /** One pass over HTTP, its requests counted as they leave: GETs (lookups) and writes. */
    const pass = async (
      state: Awaited<ReturnType<typeof freshState>>,
      records: SourceRecord[],
    ): Promise<Counted> => {
      const counted = { lookups: 0, writes: 0 };
      const client = new ReceivablesClient({
        baseUrl: sandbox.baseUrl,
        tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
        limiter: createRateLimiter({ logger }),
        logger,
        fetch: (input, init) => {
          if ((init?.method ?? 'GET') === 'GET') counted.lookups++;
          else counted.writes++;
          return fetch(input, init);
        },
      });
      try {
        const summary = await runSync({
          source: replaySource(
            SOURCE,
            'test',
            records.map((record) => ({ record, origin: {} })),
          ),
          connectionId: SOURCE,
          api: new ClientSyncApi(client, sandbox.organizationId),
          state,
          logger,
        });
        return { summary, ...counted };
      } finally {
        await client.close();
      }
    };

    const stats = async () => {
      const { accounts, invoices, creditNotes } = await sandbox.admin('GET', '/stats');
      return { accounts, invoices, creditNotes };
    };

    it('when a new source syncs for the first time, then it costs one request a record; when its state DB is lost, the re-sync creates nothing twice, at most 1.02 requests a record', async () => {
      const records = dataset(120); // 120 accounts, 240 invoices, 60 credit notes
      const first = await pass(await freshState(), records);
      expect(first.summary.failures).toEqual([]);
      const firstPerRecord = (first.writes + first.lookups) / records.length;
      expect(first.lookups).toBe(0);
      expect(firstPerRecord).toBeLessThanOrEqual(1.005);
      expect(await stats()).toEqual({ accounts: 120, invoices: 240, creditNotes: 60 });

      const lost = await freshState();
      const again = await pass(lost, records);
      const againPerRecord = (again.writes + again.lookups) / records.length;
      expect(again.summary.failures).toEqual([]);
      const { accounts, invoices, creditNotes } = again.summary.counts;
      expect(accounts.created + invoices.created + creditNotes.created).toBe(0);
      expect(await stats()).toEqual({ accounts: 120, invoices: 240, creditNotes: 60 });
      expect(await lost.pending.count(SOURCE)).toBe(0);
      // The pass's first create goes alone: refused as a duplicate, it switches the pass to lookups.
      expect(again.writes).toBe(1);
      expect(againPerRecord).toBeLessThanOrEqual(1.02);
      console.log(
        `duplicate status ${duplicateSourceStatus}: first sync ${firstPerRecord.toFixed(4)} requests a record (${first.writes} writes, ${first.lookups} lookups); after a lost state ${againPerRecord.toFixed(4)} (${again.writes} refused creates, ${again.lookups} lookups) for ${records.length} records`,
      );

      // And the adopted state is complete: one more pass costs nothing.
      const rest = await pass(lost, records);
      expect(rest.writes + rest.lookups).toBe(0);
    });

    it('when the state DB is an older copy (restored), then the records synced since are adopted and the new ones created, each once', async () => {
      const older = await freshState();
      await pass(older, dataset(20)); // A1..20, I1..40, C1..10
      // Another deployment, with a state DB of its own, synced more since.
      await pass(await freshState(), dataset(40)); // up to A40, I80, C20
      // The older state DB comes back and syncs even more: known, adopted and new records mixed.
      const restored = await pass(older, dataset(60)); // up to A60, I120, C30
      expect(restored.summary.failures).toEqual([]);
      expect(restored.summary.counts.accounts.created).toBe(20);
      expect(await stats()).toEqual({ accounts: 60, invoices: 120, creditNotes: 30 });
    });
  },
);
