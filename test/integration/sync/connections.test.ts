import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../../src/app/doctor.js';
import { checkAccess, openSyncRuntime, type SyncRuntime, syncServiceOf } from '../../../src/app/runtime.js';
import { loadConfig } from '../../../src/config/load.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { createLogger } from '../../../src/logging/logger.js';
import { ACCOUNT_HEADER, dropCsv, INVOICE_HEADER } from '../../support/drop-data.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';

/**
 * Several connections in one deployment (docs/connections.md): two organizations on one token (the
 * default connection) and a second API with its own token (`connections:`). Each source's records
 * land in its own organization, exactly once, and one connection's token refresh leaves the other's
 * credentials alone.
 */
describe('connections: several organizations and tokens in one deployment', () => {
  const silent = createLogger({ level: 'silent' });
  const schema = uniqueSchema('connections');
  let first: TestSandbox;
  let second: TestSandbox;
  let dir: string;
  let orgB: string;
  const secondClock = new ManualClock(Date.now());
  const calls: Array<{ host: string; path: string }> = [];
  const counting: typeof fetch = (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push({ host: url.host, path: url.pathname });
    return fetch(input, init);
  };
  const tokenCalls = (sandbox: TestSandbox) =>
    calls.filter((c) => c.host === new URL(sandbox.baseUrl).host && c.path === '/api/oauth/token').length;

  const rows = (prefix: string, n: number) => ({
    accounts: Array.from(
      { length: n },
      (_, i) => `${prefix}-C${i},${prefix} customer ${i},EUR,1 rue du Port,Nantes,44000,FR,,`,
    ),
    invoices: Array.from(
      { length: n },
      (_, i) => `${prefix}-I${i},${prefix}-C${i},${prefix}-F${i},2026-01-10,2026-02-09,120.00,20.00,,,,,,,`,
    ),
  });
  const drop = (source: string, prefix: string, n: number, suffix = '') => {
    const data = rows(prefix, n);
    dropCsv(join(dir, source), `accounts${suffix}.csv`, ACCOUNT_HEADER, data.accounts);
    dropCsv(join(dir, source), `invoices${suffix}.csv`, INVOICE_HEADER, data.invoices);
  };

  beforeAll(async () => {
    first = await startTestSandbox();
    // The second API's clock is the test's: moved past its access tokens' hour, it refuses them
    // (401), and that connection refreshes during the test.
    second = await startTestSandbox({ clock: secondClock });
    const other = await first.admin('POST', '/organizations', {
      name: 'Second entity',
      memberUserIds: [first.seeded.user.id],
    });
    orgB = other.id;
    dir = mkdtempSync(join(tmpdir(), 'rs-connections-'));
  });

  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await dropSchema(schema);
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(extraSources: string[] = []): Promise<SyncRuntime> {
    return openSyncRuntime(await configure(extraSources), silent, { fetch: counting });
  }

  async function configure(extraSources: string[] = []) {
    const [firstTokens, secondTokens] = await Promise.all([
      first.admin('POST', '/tokens', { withRefreshToken: true }),
      second.admin('POST', '/tokens', { withRefreshToken: true }),
    ]);
    const file = join(dir, 'receivables-sync.yaml');
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'data')} }`,
        'connections:',
        `  - { id: second-api, baseUrl: ${second.baseUrl}, refreshTokenEnv: SECOND_REFRESH_TOKEN }`,
        'sources:',
        `  - { id: entity-a, type: csv, dropDir: ${join(dir, 'a')}, stableSeconds: 0, organizationId: ${first.organizationId} }`,
        `  - { id: entity-b, type: csv, dropDir: ${join(dir, 'b')}, stableSeconds: 0, organizationId: ${orgB} }`,
        `  - { id: client-c, type: csv, dropDir: ${join(dir, 'c')}, stableSeconds: 0, connection: second-api }`,
        ...extraSources,
      ].join('\n'),
    );
    return loadConfig({
      file,
      env: {
        RECEIVABLES_BASE_URL: first.baseUrl,
        RECEIVABLES_REFRESH_TOKEN: firstTokens.refreshToken,
        SECOND_REFRESH_TOKEN: secondTokens.refreshToken,
        DATABASE_URL: TEST_DATABASE_URL,
        DATABASE_SCHEMA: schema,
        RECEIVABLES_TOKEN_KEY: 'k'.repeat(32),
      },
    });
  }

  const accountsOf = (sandbox: TestSandbox, organizationId: string) =>
    [...sandbox.deps.store.accounts.values()].filter((a) => a.organizationId === organizationId);
  const documentsOf = (sandbox: TestSandbox, organizationId: string) =>
    [...sandbox.deps.store.documents.values()].filter((d) => d.organizationId === organizationId);
  const sourceIds = (records: Array<{ source?: { sourceId: string } | null; sourceId?: string | null }>) =>
    records.map((r) => r.source?.sourceId ?? r.sourceId).sort();

  it("when three sources sync through two organizations of one token and a second API, then each lands in its own organization exactly once, and a refresh of one connection leaves the other alone; the state DB keeps each source's connection and organization", async () => {
    drop('a', 'A', 5);
    drop('b', 'B', 4);
    drop('c', 'C', 3);
    const runtime = await open();
    try {
      const service = syncServiceOf(runtime, runtime.loaded.config.sources);
      for (const id of ['entity-a', 'entity-b', 'client-c']) await service.syncSource(id);

      const expected = (prefix: string, n: number, kind: 'C' | 'I') =>
        Array.from({ length: n }, (_, i) => `${prefix}-${kind}${i}`).sort();
      expect(sourceIds(accountsOf(first, first.organizationId))).toEqual(expected('A', 5, 'C'));
      expect(sourceIds(documentsOf(first, first.organizationId))).toEqual(expected('A', 5, 'I'));
      expect(sourceIds(accountsOf(first, orgB))).toEqual(expected('B', 4, 'C'));
      expect(sourceIds(documentsOf(first, orgB))).toEqual(expected('B', 4, 'I'));
      expect(sourceIds(accountsOf(second, second.organizationId))).toEqual(expected('C', 3, 'C'));
      expect(sourceIds(documentsOf(second, second.organizationId))).toEqual(expected('C', 3, 'I'));
      // Nothing of the second API's source reached the first one, and the other way round.
      expect(first.deps.store.accounts.size).toBe(9);
      expect(second.deps.store.accounts.size).toBe(3);

      // The second connection's access token expires; the first's does not.
      const firstCredentials = readFileSync(join(dir, 'data', 'credentials.enc'));
      const secondCredentials = readFileSync(join(dir, 'data', 'credentials.second-api.enc'));
      const [firstRefreshes, secondRefreshes] = [tokenCalls(first), tokenCalls(second)];
      secondClock.advance(2 * 3_600_000);
      drop('a', 'A', 7, '-2');
      drop('c', 'C', 6, '-2');
      for (const id of ['entity-a', 'entity-b', 'client-c']) await service.syncSource(id);

      expect(tokenCalls(second)).toBeGreaterThan(secondRefreshes);
      expect(tokenCalls(first)).toBe(firstRefreshes);
      expect(readFileSync(join(dir, 'data', 'credentials.enc'))).toEqual(firstCredentials);
      expect(readFileSync(join(dir, 'data', 'credentials.second-api.enc'))).not.toEqual(secondCredentials);
      // The new rows landed once each; the rows seen before were unchanged and not sent again.
      expect(sourceIds(accountsOf(first, first.organizationId))).toEqual(expected('A', 7, 'C'));
      expect(sourceIds(accountsOf(second, second.organizationId))).toEqual(expected('C', 6, 'C'));
      expect(sourceIds(documentsOf(second, second.organizationId))).toEqual(expected('C', 6, 'I'));
      expect(sourceIds(accountsOf(first, orgB))).toEqual(expected('B', 4, 'C'));
    } finally {
      await runtime.close();
    }
    // Read back by a new runtime: each source kept its connection and organization with its records.
    const reopened = await open();
    try {
      const rowsOf = await reopened.database.db
        .selectFrom('record_map')
        .select(['source_id', 'connection_id', 'organization_id'])
        .groupBy(['source_id', 'connection_id', 'organization_id'])
        .orderBy('source_id')
        .execute();
      expect(rowsOf).toEqual([
        { source_id: 'client-c', connection_id: 'second-api', organization_id: second.organizationId },
        { source_id: 'entity-a', connection_id: 'default', organization_id: first.organizationId },
        { source_id: 'entity-b', connection_id: 'default', organization_id: orgB },
      ]);
    } finally {
      await reopened.close();
    }
  });

  it('when a source names no organization on a token that sees several, then doctor fails it by name, though its neighbours name theirs', async () => {
    const extra = [`  - { id: entity-c, type: csv, dropDir: ${join(dir, 'c2')}, stableSeconds: 0 }`];
    const checks = await runDoctor(await configure(extra));
    const organization = checks.filter((c) => c.name === 'organization (default)');
    expect(organization.map((c) => c.status)).toEqual(['ok', 'fail']);
    expect(organization[1]?.detail).toContain('source entity-c names no organization and the token sees 2');
    expect(checks.find((c) => c.name === 'organization (second-api)')?.status).toBe('ok');
  });

  it('when a source names an organization its token does not see, then doctor fails it by connection, and the source cannot sync while the others still do', async () => {
    const stranger = '00000000-0000-4000-8000-0000000000aa';
    const extra = [
      `  - { id: lost, type: csv, dropDir: ${join(dir, 'lost')}, stableSeconds: 0, connection: second-api, organizationId: ${stranger} }`,
    ];
    const checks = await runDoctor(await configure(extra));
    const byName = new Map(checks.map((c) => [c.name, c]));
    expect(byName.get('token (default)')?.status).toBe('ok');
    expect(byName.get('organization (default)')).toMatchObject({ status: 'ok' });
    expect(byName.get('token (second-api)')?.status).toBe('ok');
    expect(byName.get('organization (second-api)')).toMatchObject({ status: 'fail' });
    expect(byName.get('organization (second-api)')?.detail).toContain(stranger);

    drop('lost', 'L', 40);
    // Without a check first (a pass that has rows to send): the first call answered 404 stops the
    // pass on the organization, instead of failing each of the 40 rows on it.
    const unchecked = await open(extra);
    try {
      const before = calls.length;
      await expect(
        syncServiceOf(unchecked, unchecked.loaded.config.sources).syncSource('lost'),
      ).rejects.toMatchObject({
        code: 'ORGANIZATION_NOT_VISIBLE',
        kind: 'config',
      });
      expect(calls.length - before).toBeLessThanOrEqual(3);
      expect(
        readdirSync(join(dir, 'lost'))
          .filter((f) => f.endsWith('.csv'))
          .sort(),
      ).toEqual(['accounts.csv', 'invoices.csv']);
    } finally {
      await unchecked.close();
    }
    const runtime = await open(extra);
    try {
      await expect(checkAccess(runtime, runtime.loaded.config.sources)).rejects.toMatchObject({
        code: 'ORGANIZATION_NOT_VISIBLE',
      });
      const service = syncServiceOf(runtime, runtime.loaded.config.sources);
      await expect(service.syncSource('lost')).rejects.toMatchObject({ code: 'ORGANIZATION_NOT_VISIBLE' });
      const [summary] = await service.syncSource('client-c');
      expect(summary?.counts.accounts.failed ?? 0).toBe(0);
    } finally {
      await runtime.close();
    }
    expect([...second.deps.store.accounts.values()].some((a) => a.source?.sourceId === 'L-C0')).toBe(false);
  });

  it("when a connection's token variable is unset or its token refused, then the errors name that connection and its variable, never the default connection's", async () => {
    const file = join(dir, 'ghost.yaml');
    writeFileSync(
      file,
      [
        `state: { dataDir: ${join(dir, 'ghost-data')} }`,
        'connections:',
        `  - { id: ghost, baseUrl: ${first.baseUrl}, accessTokenEnv: GHOST_TOKEN }`,
        'sources:',
        `  - { id: haunted, type: csv, dropDir: ${join(dir, 'haunted')}, stableSeconds: 0, connection: ghost, organizationId: ${first.organizationId} }`,
      ].join('\n'),
    );
    drop('haunted', 'G', 1);
    const load = (env: Record<string, string>) =>
      loadConfig({
        file,
        env: {
          DATABASE_URL: TEST_DATABASE_URL,
          DATABASE_SCHEMA: schema,
          RECEIVABLES_TOKEN_KEY: 'k'.repeat(32),
          ...env,
        },
      });
    const unset = await openSyncRuntime(load({}), silent);
    try {
      const attempt = syncServiceOf(unset, unset.loaded.config.sources).syncSource('haunted');
      await expect(attempt).rejects.toMatchObject({ code: 'LOGIN_REQUIRED' });
      await expect(attempt).rejects.toThrow(/connection "ghost".*GHOST_TOKEN.*auth login --connection ghost/);
      await expect(attempt).rejects.not.toThrow(/RECEIVABLES_/);
    } finally {
      await unset.close();
    }
    const [doctorToken] = (await runDoctor(load({}))).filter((c) => c.name === 'token (ghost)');
    expect(doctorToken).toMatchObject({ status: 'fail' });
    expect(doctorToken?.detail).toContain('GHOST_TOKEN');
    expect(doctorToken?.detail).not.toContain('RECEIVABLES_');

    const refused = await openSyncRuntime(load({ GHOST_TOKEN: 'not-a-token' }), silent);
    try {
      await expect(
        syncServiceOf(refused, refused.loaded.config.sources).syncSource('haunted'),
      ).rejects.toThrow(/refused the access token given in GHOST_TOKEN.*Fix or unset GHOST_TOKEN/);
    } finally {
      await refused.close();
    }
  });
});
