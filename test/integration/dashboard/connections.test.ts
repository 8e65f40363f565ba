import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../../src/api/rate-limit/create-rate-limiter.js';
import type { MeteredRateLimiter } from '../../../src/api/rate-limit/types.js';
import { publishConnectionBudgets } from '../../../src/app/connection-budgets.js';
import { openTokenBudgets, tokenBudgetReader } from '../../../src/app/dashboard-budgets.js';
import { type SourceConfig, sourceSchema } from '../../../src/config/schema.js';
import type { DashboardConnection } from '../../../src/dashboard/connection-groups.js';
import { RunsRepository } from '../../../src/state/runs.js';
import { stateScopes } from '../../../src/state/scopes.js';
import { rateInfo } from '../../support/rate-info.js';
import { deleteKeys, eventually, TEST_REDIS_URL } from '../../support/worker-process.js';
import { basic, openTestState, SOURCES, silentLogger, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;
const auth = { authorization: basic() };
const html = { ...auth, accept: 'text/html' };

const ORG_A = '0b6f2c3e-8a41-4d5e-9c7b-1a2b3c4d5e6f';
const ORG_B = '9d2e4f6a-1b3c-4d5e-8f7a-6b5c4d3e2f1a';
const ORG_ACME = '6f1c0e2d-3b4a-4c5d-9e8f-7a6b5c4d3e2f';

/** Two organizations on the default token, one source on another token (its organization unnamed). */
const SOURCES_2C: SourceConfig[] = [
  { id: 'entity-a', type: 'csv', dropDir: '/tmp/unused-a', organizationId: ORG_A },
  { id: 'entity-b', type: 'csv', dropDir: '/tmp/unused-b', organizationId: ORG_B },
  { id: 'acme-erp', type: 'csv', dropDir: '/tmp/unused-acme', connection: 'client-acme' },
].map((s) => sourceSchema.parse(s));

const CONNECTIONS: DashboardConnection[] = [
  { id: 'default', baseUrl: 'https://receivables.example.com', organizationId: null },
  { id: 'client-acme', baseUrl: 'https://api.acme-receivables.example.net/v1', organizationId: null },
];

/** The markup of one connection group (up to the next one, or the end of the sources section). */
function groupOf(page: string, connectionId: string): string {
  const start = page.indexOf(`<div class="connection" data-connection="${connectionId}">`);
  if (start < 0) throw new Error(`no group of connection ${connectionId}`);
  const rest = page.slice(start + 1);
  const ends = [rest.indexOf('<div class="connection"'), rest.indexOf('</section>')].filter((i) => i >= 0);
  return rest.slice(0, Math.min(...ends));
}

describe('dashboard: sources by connection and organization, with each token budget', () => {
  const prefix = `t-dash-conn-${randomBytes(4).toString('hex')}`;
  let state: State;
  let redis: Redis;
  let limiter: MeteredRateLimiter;
  const waits = new AbortController();
  let waiting: Array<Promise<unknown>> = [];

  beforeAll(async () => {
    state = await openTestState('dash_connections');
    redis = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 });
    // acme-erp's last pass recorded the organization its token resolved to.
    const runs = new RunsRepository(
      state.db,
      stateScopes(new Map([['acme-erp', { connectionId: 'client-acme', organizationId: ORG_ACME }]])),
    );
    await runs.finish(await runs.start('acme-erp', 'schedule', false), 'succeeded', {});

    // The limiter itself fills the budgets: 7 requests of the default token (policy 300/60), and
    // the acme token's 4 of 4, with acme-erp's next 2 requests waiting for it.
    limiter = createRateLimiter({ redis, prefix, logger: silentLogger });
    await limiter.observe('budget-default', rateInfo(300, 60));
    await limiter.observe('budget-acme', rateInfo(4, 60));
    for (let i = 0; i < 7; i++)
      await limiter.acquire('budget-default', undefined, { id: 'entity-a', weight: 1 });
    for (let i = 0; i < 4; i++)
      await limiter.acquire('budget-acme', undefined, { id: 'acme-erp', weight: 1 });
    waiting = [0, 1].map((_) =>
      limiter.acquire('budget-acme', waits.signal, { id: 'acme-erp', weight: 1 }).catch(() => undefined),
    );
    await publishConnectionBudgets(redis, prefix, [
      { connectionId: 'default', budgetKey: 'budget-default', organizations: [ORG_A, ORG_B] },
      { connectionId: 'client-acme', budgetKey: 'budget-acme', organizations: [ORG_ACME] },
    ]);
    const read = tokenBudgetReader({ redis, prefix, logger: silentLogger });
    await eventually(
      read,
      (r) => r.available && r.byConnection.get('client-acme')?.use.waiting[0]?.requests === 2,
      { what: 'two waiting requests of acme-erp' },
    );
  });
  afterAll(async () => {
    waits.abort();
    await Promise.all(waiting);
    await limiter?.close();
    await deleteKeys(TEST_REDIS_URL, `${prefix}:*`);
    redis?.disconnect();
    await state?.close();
  });

  const appWith = (overrides: Parameters<typeof testApp>[1] = {}) =>
    testApp(state, {
      sources: SOURCES_2C,
      connections: CONNECTIONS,
      tokenBudgets: tokenBudgetReader({ redis, prefix, logger: silentLogger }),
      ...overrides,
    });

  it('when two connections have sources, then the page has a heading per connection with its host, its quota use and who waits, and a group per organization', async () => {
    const res = await appWith().inject({ url: '/', headers: html });
    expect(res.statusCode).toBe(200);

    const main = groupOf(res.body, 'default');
    expect(main).toMatch(
      /<h3 class="group">Connection <code>default<\/code> <span[^>]*>receivables\.example\.com</,
    );
    expect(main).toMatch(/data-budget-status="ok"/);
    expect(main).toMatch(
      /data-field="budget-used">7<\/span> \/ <span data-field="budget-quota">300<\/span> in the last 60 s · none waiting/,
    );
    expect(main).toContain(`data-organization="${ORG_A}"`);
    expect(main).toContain(`data-organization="${ORG_B}"`);
    expect(main).toContain('data-source="entity-a"');
    expect(main).toContain('data-source="entity-b"');
    expect(main).not.toContain('data-source="acme-erp"');

    const acme = groupOf(res.body, 'client-acme');
    expect(acme).toMatch(
      /Connection <code>client-acme<\/code> <span[^>]*>api\.acme-receivables\.example\.net</,
    );
    expect(acme).toMatch(
      /data-field="budget-used">4<\/span> \/ <span data-field="budget-quota">4<\/span> in the last 60 s/,
    );
    expect(acme).toMatch(
      /waiting: <span data-waiting="acme-erp"><a href="\/sources\/acme-erp">acme-erp<\/a> \(<span data-field="waiting-requests">2<\/span> requests\)/,
    );
    expect(acme).toMatch(
      new RegExp(`Organization <code>${ORG_ACME}</code> <span[^>]*>as its last run recorded<`),
    );
    expect(acme).toContain('data-source="acme-erp"');
  });

  it('when the status is asked as JSON, then connections list each budget and organization with its sources', async () => {
    const res = await appWith().inject({ url: '/api/status', headers: auth });
    expect(res.statusCode).toBe(200);
    const { connections } = res.json();
    expect(connections).toEqual([
      {
        id: 'default',
        baseUrl: 'https://receivables.example.com',
        host: 'receivables.example.com',
        budgetStatus: 'ok',
        budget: {
          requestsInWindow: 7,
          quota: 300,
          windowSeconds: 60,
          waiting: [],
          toldAt: expect.any(String),
        },
        organizations: [
          { id: ORG_A, from: 'source', sources: ['entity-a'] },
          { id: ORG_B, from: 'source', sources: ['entity-b'] },
        ],
      },
      {
        id: 'client-acme',
        baseUrl: 'https://api.acme-receivables.example.net/v1',
        host: 'api.acme-receivables.example.net',
        budgetStatus: 'ok',
        budget: {
          requestsInWindow: 4,
          quota: 4,
          windowSeconds: 60,
          waiting: [{ flow: 'acme-erp', requests: 2 }],
          toldAt: expect.any(String),
        },
        organizations: [{ id: ORG_ACME, from: 'last-run', sources: ['acme-erp'] }],
      },
    ]);
  });

  it('when no worker told a connection, then its quota line says so and the page still groups its sources', async () => {
    const res = await appWith({
      tokenBudgets: tokenBudgetReader({ redis, prefix: `${prefix}-nobody`, logger: silentLogger }),
    }).inject({ url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    expect(groupOf(res.body, 'client-acme')).toMatch(
      /data-budget-status="not-told"[^>]*>API budget: no worker has told its use yet</,
    );
  });

  it('when the configuration has no connections and one organization, then the page shows no heading, only one quota line above the cards', async () => {
    await publishConnectionBudgets(redis, `${prefix}-single`, [
      { connectionId: 'default', budgetKey: 'budget-default', organizations: [ORG_A] },
    ]);
    const res = await testApp(state, {
      connections: [CONNECTIONS[0]!],
      tokenBudgets: tokenBudgetReader({
        redis,
        prefix: `${prefix}-single`,
        limiterPrefix: prefix,
        logger: silentLogger,
      }),
    }).inject({ url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    const page = res.body;
    expect(page).not.toContain('class="group"');
    expect(page).not.toContain('data-organization=');
    expect(page.match(/data-field="quota"/g)).toHaveLength(1);
    expect(page).toMatch(
      /API budget: <span data-field="budget-used">7<\/span> \/ <span data-field="budget-quota">300</,
    );
    for (const source of SOURCES) expect(page).toContain(`data-source="${source.id}"`);
    await deleteKeys(TEST_REDIS_URL, `${prefix}-single:*`);
  });

  it('when the dashboard has no Redis, then the quota is unknown', async () => {
    const res = await testApp(state).inject({ url: '/', headers: html });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/data-budget-status="unknown"[^>]*>API budget: unknown/);
    expect(res.body).not.toContain('class="group"');
    const json = (await testApp(state).inject({ url: '/api/status', headers: auth })).json();
    expect(json.connections).toEqual([
      {
        id: 'default',
        baseUrl: null,
        host: null,
        budget: null,
        budgetStatus: 'unknown',
        organizations: [{ id: null, from: 'unresolved', sources: ['erp-csv', 'billing-db'] }],
      },
    ]);
  });

  it('when Redis does not answer, then the page renders at once with the quota unavailable', async () => {
    const down = openTokenBudgets({ redisUrl: 'redis://127.0.0.1:1', prefix, logger: silentLogger });
    try {
      const app = appWith({ tokenBudgets: down.read });
      const started = Date.now();
      const res = await app.inject({ url: '/', headers: html });
      const tookMs = Date.now() - started;
      expect(res.statusCode).toBe(200);
      expect(groupOf(res.body, 'default')).toMatch(
        /data-budget-status="unavailable"[^>]*>API budget: unavailable/,
      );
      expect(groupOf(res.body, 'client-acme')).toContain('data-source="acme-erp"');
      // Bounded by the reader's 1 s timeout (in practice a refused connection fails at once).
      expect(tookMs).toBeLessThan(5000);
    } finally {
      await down.close();
    }
  });
});
