import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCompat } from '../../src/sandbox/options.js';
import { runCli } from '../support/cli.js';
import {
  ACCOUNT_HEADER,
  accountRow,
  CREDIT_NOTE_HEADER,
  creditNoteRow,
  dropCsv,
  INVOICE_HEADER,
  invoiceRow,
  range,
} from '../support/drop-data.js';
import { killRounds, seededRandom } from '../support/kill-rounds.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, openFailuresOf, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * `sync --once` killed with SIGKILL at random moments, again and again, then run to the end: every
 * record is in the service exactly once, complete (tags, paid amounts), with no failure left,
 * whatever the `source` filter of `GET /accounts` compares (the crash windows after a create are
 * recovered by matching what the service returns, not by trusting the filter).
 *
 * KILLS_PER_MEANING (default 7, so 21 kills in all) sets how many kills must land in a running
 * process per meaning; `npm run test:kills` runs 34 per meaning (102). CRASH_SEED replays a run's
 * kill delays.
 */

const KILLS = Number(process.env.KILLS_PER_MEANING ?? 7);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const ACCOUNTS = 24;
const INVOICES = 60;
const CREDIT_NOTES = 12;
const tagsOf = (i: number) => (i % 3 === 0 ? 'VIP|north' : i % 3 === 1 ? 'north' : '');
const paidOf = (i: number) => (i % 4 === 0 ? '10.00' : '');

/**
 * Drops the whole data set. Each version changes every account's city (an update of each) and
 * makes each file's checksum new, so a round after a finished pass has work to be killed in.
 */
function dropAll(env: SyncEnv, version: number) {
  const blank = '\n'.repeat(version); // blank lines are skipped, but the file is new
  dropCsv(
    env.dropDir,
    'accounts.csv',
    ACCOUNT_HEADER,
    range(1, ACCOUNTS).map((i) => accountRow(i, { tags: tagsOf(i), city: `Nantes ${version}` })),
  );
  dropCsv(env.dropDir, 'invoices.csv', INVOICE_HEADER, [
    ...range(1, INVOICES).map((i) => invoiceRow(i, (i % ACCOUNTS) + 1, { paid: paidOf(i) })),
    blank,
  ]);
  dropCsv(env.dropDir, 'credit-notes.csv', CREDIT_NOTE_HEADER, [
    ...range(1, CREDIT_NOTES).map((i) => creditNoteRow(i, (i % ACCOUNTS) + 1)),
    blank,
  ]);
}

/** What the service holds, read from the sandbox's store: per sourceId, how many and how complete. */
function serviceHolds(sandbox: TestSandbox) {
  const { store } = sandbox.deps;
  const tagName = (id: string) => store.tags.get(id)?.name ?? `?${id}`;
  const accounts = new Map<string, { count: number; tags: string }>();
  for (const account of store.accounts.values()) {
    const key = account.source?.sourceId ?? `(unlinked ${account.id})`;
    const tags = account.tagIds.map(tagName).sort().join('|');
    accounts.set(key, { count: (accounts.get(key)?.count ?? 0) + 1, tags });
  }
  const documents = new Map<string, { count: number; paid: string }>();
  for (const document of store.documents.values()) {
    const key = `${document.kind}:${document.sourceId}`;
    documents.set(key, { count: (documents.get(key)?.count ?? 0) + 1, paid: document.paidAmount });
  }
  return { accounts, documents };
}

describe.each<SandboxCompat['accountSourceFilter']>(['sourceId', 'connectionId', 'connectorType'])(
  'sync --once killed at random moments, when the source filter compares %s',
  (meaning) => {
    let sandbox: TestSandbox;
    let env: SyncEnv;
    beforeAll(async () => {
      sandbox = await startTestSandbox({
        rateLimit: { quota: 100_000, windowSeconds: 60 },
        compat: { accountSourceFilter: meaning },
      });
      env = syncEnv(sandbox, 'postgres');
    });
    afterAll(async () => {
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });
      await env?.cleanup();
      await sandbox?.close();
    });

    it(`when killed ${KILLS} times (seed ${SEED}), then the last pass leaves every record once, complete, and no failure`, async () => {
      const next = seededRandom(SEED + meaning.length);
      let version = 1;
      dropAll(env, version);
      // Slow enough that a pass takes a second or two: the kills land all along it.
      await sandbox.admin('PUT', '/faults', { latencyMs: 25 });
      // Until KILLS kills landed in a running process (a pass may finish before its kill is due),
      // from the process start (config, state DB, discovery) to well into the pass; a pass that
      // finished before its kill left nothing to do: a new version of the data.
      const { killed, rounds } = await killRounds({
        args: ['--config', env.configFile, 'sync', '--once'],
        env: env.env,
        kills: KILLS,
        next,
        minMs: 100,
        spreadMs: 1_100,
        onFinished: () => dropAll(env, ++version),
      });
      // Figures for docs/reliability.md: how many kills landed in a running process.
      console.info(
        `${meaning}: ${killed} kills landed in ${rounds} runs, ${version} data version(s), seed ${SEED}`,
      );
      expect(killed, `seed ${SEED}: kills that landed`).toBe(KILLS);
      await sandbox.admin('PUT', '/faults', { latencyMs: 0 });

      const last = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(last.code, `seed ${SEED}: ${last.stderr}`).toBe(0);
      expect(lastJsonLine(last.stdout).accounts.failed).toBe(0);

      const { accounts, documents } = serviceHolds(sandbox);
      const wantAccounts = new Map(
        range(1, ACCOUNTS).map((i) => [
          `C-${i}`,
          { count: 1, tags: tagsOf(i).split('|').filter(Boolean).sort().join('|') },
        ]),
      );
      expect(Object.fromEntries(accounts), `seed ${SEED}`).toEqual(Object.fromEntries(wantAccounts));
      const wantDocuments = new Map<string, { count: number; paid: string }>([
        ...range(1, INVOICES).map(
          (i) => [`invoice:INV-${i}`, { count: 1, paid: paidOf(i) || '0.00' }] as const,
        ),
        ...range(1, CREDIT_NOTES).map((i) => [`creditNote:CN-${i}`, { count: 1, paid: '0.00' }] as const),
      ]);
      expect(Object.fromEntries(documents), `seed ${SEED}`).toEqual(Object.fromEntries(wantDocuments));
      expect(await openFailuresOf(env), `seed ${SEED}: open failures`).toBe(0);
    }, 180_000);
  },
);
