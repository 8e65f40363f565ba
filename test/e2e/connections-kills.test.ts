import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, dropCsv, INVOICE_HEADER, range } from '../support/drop-data.js';
import { killRounds, seededRandom } from '../support/kill-rounds.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine } from '../support/sync-env.js';

/**
 * `sync --once` over several connections and organizations, killed with SIGKILL at random moments,
 * then run to the end: each source's records are in its own organization exactly once, whatever
 * pass, scope resolution or state write the kills cut. KILLS_PER_MEANING (default 7) kills land.
 */

const KILLS = Number(process.env.KILLS_PER_MEANING ?? 7);
const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
const ACCOUNTS = 10;
const INVOICES = 16;

describe('sync --once over two organizations and two tokens, killed at random moments', () => {
  const schema = uniqueSchema('connkills');
  let sandbox: TestSandbox;
  let dir: string;
  let file: string;
  let orgB: string;
  let secondToken: string;
  const sources = [
    { id: 'entity-a', prefix: 'A' },
    { id: 'entity-b', prefix: 'B' },
    { id: 'client-c', prefix: 'C' },
  ];

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    orgB = (await sandbox.admin('POST', '/organizations', { memberUserIds: [sandbox.seeded.user.id] })).id;
    secondToken = (await sandbox.admin('POST', '/tokens', {})).accessToken;
    dir = mkdtempSync(join(tmpdir(), 'rs-connkills-'));
    file = join(dir, 'receivables-sync.yaml');
    const drop = (id: string) => join(dir, id);
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'data')} }`,
        'connections:',
        `  - { id: second, baseUrl: ${sandbox.baseUrl}, accessTokenEnv: SECOND_TOKEN }`,
        'sources:',
        `  - { id: entity-a, type: csv, dropDir: ${drop('entity-a')}, stableSeconds: 0 }`,
        `  - { id: entity-b, type: csv, dropDir: ${drop('entity-b')}, stableSeconds: 0, organizationId: ${orgB} }`,
        `  - { id: client-c, type: csv, dropDir: ${drop('client-c')}, stableSeconds: 0, connection: second, organizationId: ${orgB} }`,
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await sandbox?.admin('PUT', '/faults', { latencyMs: 0 }).catch(() => undefined);
    await sandbox?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    ...apiEnvOf(sandbox),
    SECOND_TOKEN: secondToken,
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: '',
    LOG_LEVEL: 'error',
  });

  /** Each version renames every account (an update of each) and makes every file new. */
  const dropAll = (version: number) => {
    for (const { id, prefix } of sources) {
      const rows = range(1, ACCOUNTS).map(
        (i) => `${prefix}-${i},${prefix} customer ${i} v${version},EUR,1 rue du Port,Nantes,44000,FR,,`,
      );
      dropCsv(join(dir, id), 'accounts.csv', ACCOUNT_HEADER, rows);
      dropCsv(join(dir, id), 'invoices.csv', INVOICE_HEADER, [
        ...range(1, INVOICES).map(
          (i) =>
            `${prefix}-INV-${i},${prefix}-${(i % ACCOUNTS) + 1},${prefix}F${i},2026-01-10,2026-02-09,120.00,20.00,,,,,,,`,
        ),
        '\n'.repeat(version),
      ]);
    }
  };

  it(`when killed ${KILLS} times (seed ${SEED}), then the last pass leaves each source's records once in its own organization`, async () => {
    let version = 1;
    dropAll(version);
    await sandbox.admin('PUT', '/faults', { latencyMs: 15 });
    const { killed, rounds } = await killRounds({
      args: ['--config', file, 'sync', '--once'],
      env: env(),
      kills: KILLS,
      next: seededRandom(SEED),
      minMs: 100,
      spreadMs: 1_400,
      onFinished: () => dropAll(++version),
    });
    console.info(
      `connections: ${killed} kills landed in ${rounds} runs, ${version} data version(s), seed ${SEED}`,
    );
    expect(killed, `seed ${SEED}: kills that landed`).toBe(KILLS);
    await sandbox.admin('PUT', '/faults', { latencyMs: 0 });

    const last = await runCli(['--config', file, 'sync', '--once', '--json'], { env: env() });
    expect(last.code, `seed ${SEED}: ${last.stderr}`).toBe(0);
    expect(lastJsonLine(last.stdout).accounts.failed).toBe(0);

    const { store } = sandbox.deps;
    const held = (organizationId: string) => {
      const accounts = [...store.accounts.values()].filter((a) => a.organizationId === organizationId);
      const documents = [...store.documents.values()].filter((d) => d.organizationId === organizationId);
      return {
        accounts: accounts.map((a) => `${a.source?.connectionId}/${a.source?.sourceId}`).sort(),
        documents: documents.map((d) => d.sourceId).sort(),
        names: new Set(accounts.map((a) => a.fullName.replace(/^.* v/, 'v'))),
      };
    };
    const want = (source: string, prefix: string) => ({
      accounts: range(1, ACCOUNTS).map((i) => `${source}/${prefix}-${i}`),
      documents: range(1, INVOICES).map((i) => `${prefix}-INV-${i}`),
    });
    const sorted = (...lists: string[][]) => lists.flat().sort();
    const a = held(sandbox.organizationId);
    const b = held(orgB);
    expect(a.accounts, `seed ${SEED}`).toEqual(sorted(want('entity-a', 'A').accounts));
    expect(a.documents, `seed ${SEED}`).toEqual(sorted(want('entity-a', 'A').documents));
    expect(b.accounts, `seed ${SEED}`).toEqual(
      sorted(want('entity-b', 'B').accounts, want('client-c', 'C').accounts),
    );
    expect(b.documents, `seed ${SEED}`).toEqual(
      sorted(want('entity-b', 'B').documents, want('client-c', 'C').documents),
    );
    // Every account carries the last version's name: no update was lost to a kill.
    expect([...a.names, ...b.names]).toEqual([`v${version}`, `v${version}`]);
  }, 240_000);
});
