import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { ACCOUNT_HEADER, dropCsv } from '../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../support/postgres.js';
import { apiEnvOf, startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine } from '../support/sync-env.js';

/** Each source's last run, as `status --json` of the configuration `file` shows it. */
async function lastRuns(
  file: string,
  env: NodeJS.ProcessEnv,
): Promise<Map<string, Record<string, unknown> | null>> {
  const status = await runCli(['--config', file, 'status', '--json'], { env });
  expect(status.code, status.stderr).toBe(0);
  const sources = JSON.parse(status.stdout).sources as Array<{
    id: string;
    lastRun: Record<string, unknown> | null;
  }>;
  return new Map(sources.map((source) => [source.id, source.lastRun]));
}

/** `count` account rows whose source ids start with `prefix` (each source's own: `N-0`, `N-1`...). */
const accountRows = (prefix: string, count: number) =>
  Array.from(
    { length: count },
    (_, i) => `${prefix}${i},${prefix} customer ${i},EUR,1 rue du Port,Nantes,44000,FR,,`,
  );

/** A port nothing listens on: an API that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const csvFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.csv')) : []);

/**
 * `sync --once` with several connections, through the built CLI: an outage of one connection's API
 * is never a data problem and never stops the other connections' sources.
 */
describe('sync --once with connections: one API down', () => {
  const schema = uniqueSchema('conncli');
  let sandbox: TestSandbox;
  let dir: string;
  let file: string;
  let deadUrl: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = mkdtempSync(join(tmpdir(), 'rs-conncli-'));
    deadUrl = `http://127.0.0.1:${await closedPort()}`;
    file = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'data')} }`,
        'connections:',
        // No organization named: the start does not wait for this connection to tell its own.
        // Three tries of a request (the default 8 take about 25 s), for this connection only.
        `  - { id: down-api, baseUrl: ${deadUrl}, accessTokenEnv: DOWN_API_TOKEN, timeoutSeconds: 2, retryAttempts: 3 }`,
        'sources:',
        `  - { id: stranded, type: csv, dropDir: ${join(dir, 'stranded')}, stableSeconds: 0, connection: down-api }`,
        `  - { id: healthy, type: csv, dropDir: ${join(dir, 'healthy')}, stableSeconds: 0 }`,
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await sandbox?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (downToken = 'a-token-of-the-other-service') =>
    runCli(['--config', file, 'sync', '--once', '--json'], {
      env: {
        ...apiEnvOf(sandbox),
        DOWN_API_TOKEN: downToken,
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        REDIS_URL: '',
        LOG_LEVEL: 'error',
      },
    });

  it('when one connection API is unreachable, then the other connection sources still sync, the stranded files stay in their drop folder, and the run exits 1 naming that connection', async () => {
    dropCsv(join(dir, 'stranded'), 'accounts.csv', ACCOUNT_HEADER, accountRows('X-', 5));
    dropCsv(join(dir, 'healthy'), 'accounts.csv', ACCOUNT_HEADER, accountRows('H-', 5));

    const result = await run();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `connection down-api: could not run: the API at ${deadUrl} is unreachable`,
    );
    expect(result.stderr).toContain("the other connections' sources were synced");
    const summary = lastJsonLine(result.stdout);
    expect(summary.accounts.created).toBe(5);
    expect(summary.error.code).toMatch(/NETWORK_ERROR|TIMEOUT/);
    const synced = [...sandbox.deps.store.accounts.values()].map((a) => a.source?.sourceId).sort();
    expect(synced).toEqual(['H-0', 'H-1', 'H-2', 'H-3', 'H-4']);
    // Nothing of the stranded source was lost or rejected: its file waits for the next pass.
    expect(csvFiles(join(dir, 'stranded'))).toEqual(['accounts.csv']);
    expect(csvFiles(join(dir, 'stranded', 'rejected'))).toEqual([]);
    expect(csvFiles(join(dir, 'healthy'))).toEqual([]);
    // The stranded source's pass stopped before reading anything: its run says why.
    const stateEnv = { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema, LOG_LEVEL: 'error' };
    const stopped = (await lastRuns(file, stateEnv)).get('stranded');
    expect(stopped).toMatchObject({ status: 'failed' });
    expect(stopped?.error).toMatch(/organizations: fetch failed: connect ECONNREFUSED/);

    // Its API answers again (here: the connection points at a service that answers): the next pass
    // syncs the waiting file, once, and the healthy source sends nothing again.
    writeFileSync(file, readFileSync(file, 'utf8').replace(deadUrl, sandbox.baseUrl));
    const healed = await run(sandbox.accessToken);
    expect(healed.code).toBe(0);
    expect(lastJsonLine(healed.stdout).accounts.created).toBe(5);
    const after = [...sandbox.deps.store.accounts.values()].map((a) => a.source?.sourceId);
    expect(after).toHaveLength(10);
    expect(new Set(after).size).toBe(10);
    expect(csvFiles(join(dir, 'stranded'))).toEqual([]);
    expect((await lastRuns(file, stateEnv)).get('stranded')).toMatchObject({ status: 'succeeded' });
  });
});

/**
 * A source whose organization cannot be settled (none named, and its token sees several) is its own
 * setting's fault, not its connection's: the other sources of the same connection still sync.
 */
describe('sync --once: a source without an organization, on a token that sees several', () => {
  const schema = uniqueSchema('orgcli');
  let sandbox: TestSandbox;
  let dir: string;
  let file: string;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    await sandbox.admin('POST', '/organizations', {
      name: 'Second entity',
      memberUserIds: [sandbox.seeded.user.id],
    });
    dir = mkdtempSync(join(tmpdir(), 'rs-orgcli-'));
    file = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'data')} }`,
        'sources:',
        `  - { id: unnamed, type: csv, dropDir: ${join(dir, 'unnamed')}, stableSeconds: 0 }`,
        `  - { id: named, type: csv, dropDir: ${join(dir, 'named')}, stableSeconds: 0, organizationId: ${sandbox.organizationId} }`,
      ].join('\n'),
    );
  });

  afterAll(async () => {
    await sandbox?.close();
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The state DB of these tests, for `status`. */
  const stateEnv = {
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: '',
    LOG_LEVEL: 'error',
  };
  /** `sync --once --json` with no organization set for the token (it sees two). */
  const sync = () =>
    runCli(['--config', file, 'sync', '--once', '--json'], {
      env: { ...apiEnvOf(sandbox), RECEIVABLES_ORGANIZATION_ID: '', ...stateEnv },
    });

  it('when one source names no organization, then it alone is not synced, the message names it, and the source that names one syncs', async () => {
    dropCsv(join(dir, 'unnamed'), 'accounts.csv', ACCOUNT_HEADER, accountRows('U-', 3));
    dropCsv(join(dir, 'named'), 'accounts.csv', ACCOUNT_HEADER, accountRows('N-', 3));

    const result = await sync();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('source unnamed: ');
    expect(result.stderr).toContain('several organizations');
    expect(result.stderr).toContain('the other sources were synced');
    expect(result.stderr).not.toContain('connection default');
    expect(lastJsonLine(result.stdout).error.code).toBe('ORGANIZATION_UNKNOWN');
    const synced = [...sandbox.deps.store.accounts.values()].map((a) => a.source?.sourceId).sort();
    expect(synced).toEqual(['N-0', 'N-1', 'N-2']);
    expect(csvFiles(join(dir, 'unnamed'))).toEqual(['accounts.csv']);
    expect(csvFiles(join(dir, 'named'))).toEqual([]);
    // The source that could not start says why where a user looks: its last run, failed.
    const bySource = await lastRuns(file, stateEnv);
    expect(bySource.get('unnamed')).toMatchObject({ trigger: 'once', status: 'failed' });
    expect(bySource.get('unnamed')?.error).toMatch(/several organizations/);
    expect(bySource.get('named')).toMatchObject({ status: 'succeeded' });
  });

  it('when no source names an organization, then the run stops at its start, as it always did, and nothing is synced', async () => {
    writeFileSync(file, readFileSync(file, 'utf8').replace(/, organizationId: [0-9a-f-]+/, ''));
    dropCsv(join(dir, 'named'), 'accounts.csv', ACCOUNT_HEADER, [
      'Z-1,Z customer,EUR,1 rue du Port,Nantes,44000,FR,,',
    ]);
    const before = sandbox.deps.store.accounts.size;
    const result = await sync();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('several organizations');
    expect(result.stderr).not.toContain('source unnamed: ');
    expect(sandbox.deps.store.accounts.size).toBe(before);
    expect(csvFiles(join(dir, 'named'))).toEqual(['accounts.csv']);
    expect(csvFiles(join(dir, 'unnamed'))).toEqual(['accounts.csv']);
  });
});
