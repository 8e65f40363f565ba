import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StaticTokenProvider } from '../../../src/api/auth/static-token-provider.js';
import { ReceivablesClient } from '../../../src/api/client.js';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import { ClientSyncApi } from '../../../src/app/sync-api.js';
import type { AccountRecord, InvoiceRecord, SourceRecord } from '../../../src/domain/records.js';
import type { SandboxCompat } from '../../../src/sandbox/options.js';
import type { StateDatabase } from '../../../src/state/database.js';
import { syncStateRepos } from '../../../src/state/repositories.js';
import { replaySource } from '../../../src/sync/replay-source.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { openStateOfKind } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

/**
 * What the `source` filter of `GET /accounts` compares is "not shown" in the spec. Against the
 * sandbox switched to each plausible meaning, over HTTP and with the real Postgres state DB: a
 * state DB lost after a first sync (a restore, a new deployment) re-syncs without a duplicate and
 * with nothing failed, whatever the filter matches.
 */

const logger = pino({ level: 'silent' });
const SOURCE = 'erp';

const account = (i: number): AccountRecord => ({
  kind: 'account',
  sourceId: `C-${i}`,
  fullName: `Customer ${i}`,
  currencyCode: 'EUR',
  billingAddress: { street: `${i} quai`, city: 'Nantes', postalCode: '44000', country: 'FR' },
  tags: i === 1 ? ['vip'] : [],
  updatedAt: null,
});

const invoice = (i: number): InvoiceRecord => ({
  kind: 'invoice',
  sourceId: `INV-${i}`,
  accountSourceId: `C-${(i % 4) + 1}`,
  number: `F-${i}`,
  issuedDate: { year: 2026, month: 1, day: 10 },
  dueDate: { year: 2026, month: 2, day: 9 },
  totalAmount: '120.00',
  taxAmount: '20.00',
  billingAddress: null,
  file: null,
  paidAmount: i === 2 ? '40' : null,
  updatedAt: null,
});

const records = (): SourceRecord[] => [...[1, 2, 3, 4].map(account), ...[1, 2, 3, 4, 5, 6].map(invoice)];

describe.each<SandboxCompat['accountSourceFilter']>(['sourceId', 'connectionId', 'connectorType'])(
  'a state DB lost after a sync, when the source filter compares %s',
  (meaning) => {
    let sandbox: TestSandbox;
    const opened: StateDatabase[] = [];

    beforeEach(async () => {
      sandbox = await startTestSandbox({ compat: { accountSourceFilter: meaning } });
    });
    afterEach(async () => {
      await sandbox.close();
      for (const state of opened.splice(0)) await state.close();
    });

    const freshState = async () => {
      const state = await openStateOfKind('postgres', 'filter');
      opened.push(state);
      return syncStateRepos(state.db);
    };

    const pass = async (state: Awaited<ReturnType<typeof freshState>>) => {
      const client = new ReceivablesClient({
        baseUrl: sandbox.baseUrl,
        tokens: new StaticTokenProvider({ accessToken: sandbox.accessToken }),
        limiter: createRateLimiter({ logger }),
        logger,
      });
      try {
        return await runSync({
          source: replaySource(
            SOURCE,
            'test',
            records().map((record) => ({ record, origin: {} })),
          ),
          connectionId: SOURCE,
          api: new ClientSyncApi(client, sandbox.organizationId),
          state,
          logger,
        });
      } finally {
        await client.close();
      }
    };

    it('when it syncs again from an empty state DB, then every record is adopted, none created twice, none failed', async () => {
      const first = await pass(await freshState());
      expect(first.failures).toEqual([]);
      const before = await sandbox.admin('GET', '/stats');

      const lost = await freshState();
      const again = await pass(lost);
      expect(again.failures).toEqual([]);
      expect(again.counts.accounts.created + again.counts.invoices.created).toBe(0);
      const after = await sandbox.admin('GET', '/stats');
      expect({ accounts: after.accounts, invoices: after.invoices }).toEqual({
        accounts: before.accounts,
        invoices: before.invoices,
      });
      expect(await lost.pending.count(SOURCE)).toBe(0);
      const accounts = await sandbox.call('GET', '/accounts', {
        query: { organizationId: sandbox.organizationId },
      });
      const sourceIds = accounts.body.nodes
        .map((a: { source: { sourceId: string } }) => a.source.sourceId)
        .sort();
      expect(sourceIds).toEqual(['C-1', 'C-2', 'C-3', 'C-4']);
    });
  },
);
