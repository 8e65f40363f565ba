import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { readConnectionBudgets, watchConnections } from '../../../src/app/connection-budgets.js';
import type { SourceConfig } from '../../../src/config/schema.js';
import { AppError } from '../../../src/domain/errors.js';
import { eventually } from '../../support/worker-process.js';
import { captureLogs } from '../api/auth-support.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * The worker's watch of its connections (src/app/connection-budgets.ts): the check of every
 * source's connection and organization at start, and the budgets told to the dashboard, over a
 * real Redis.
 */
describe("the worker's watch of its connections", () => {
  const redis = new Redis(REDIS_URL);
  const prefix = `test-conn-watch-${randomUUID().slice(0, 8)}`;
  const sources = [{ id: 'erp', type: 'csv', dropDir: '/tmp/x' }] as unknown as SourceConfig[];

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('when sources cannot sync (an organization out of its token reach, an ambiguous one), then the start names each as an error, and the budgets of the connections are told to the dashboard', async () => {
    const logs = captureLogs();
    const watch = watchConnections({
      targets: {
        check: async () => [
          {
            sourceId: 'erp',
            error: new AppError(
              'ORGANIZATION_NOT_VISIBLE',
              'organization x is not among those the token sees',
            ),
          },
          {
            sourceId: 'crm',
            error: new AppError('ORGANIZATION_UNKNOWN', 'the token sees several organizations'),
          },
        ],
        budgets: () => [
          { connectionId: 'default', budgetKey: 'at:0123456789abcdef', organizations: ['org-1'] },
        ],
      },
      sources,
      redis,
      prefix,
      logger: logs.log,
      intervalMs: 50,
    });
    const checks = () => logs.entries().filter((e) => e.event === 'connections.check');
    await eventually(
      async () => ({ checked: checks().length, told: (await readConnectionBudgets(redis, prefix)).size }),
      (seen) => seen.checked >= 2 && seen.told > 0,
      { intervalMs: 10, what: 'the check logged and the budgets told' },
    );
    await watch.stop();
    const checked = checks();
    // Each source that cannot sync is named, not only the first.
    expect(checked.map((e) => [e.level, e.sourceId, e.msg])).toEqual([
      [50, 'erp', 'a source cannot sync until its configuration is fixed'],
      [50, 'crm', 'a source cannot sync until its configuration is fixed'],
    ]);
    expect(String(checked[0]!.err)).toContain('not among those the token sees');
    const told = await readConnectionBudgets(redis, prefix);
    expect(told.get('default')).toMatchObject({ budgetKey: 'at:0123456789abcdef', organizations: ['org-1'] });
    expect(await redis.pttl(`${prefix}:connections`)).toBeGreaterThan(0);
  });

  it('when the API cannot be reached at start, then it is a warning (the passes heal with the API), not an error', async () => {
    const logs = captureLogs();
    const watch = watchConnections({
      targets: {
        check: async () => [
          {
            sourceId: 'erp',
            error: new AppError('NETWORK_ERROR', 'connect ECONNREFUSED'),
          },
        ],
        budgets: () => [],
      },
      sources,
      redis,
      prefix,
      logger: logs.log,
    });
    const checks = () => logs.entries().filter((e) => e.event === 'connections.check');
    await eventually(
      async () => checks().length,
      (n) => n > 0,
      { intervalMs: 10, what: 'the check logged' },
    );
    await watch.stop();
    const checked = checks();
    expect(checked).toEqual([
      expect.objectContaining({ level: 40, msg: 'connections not checked at start' }),
    ]);
    expect(logs.entries().filter((e) => e.level >= 50)).toEqual([]);
  });
  it('when the API cannot be reached at start, then the check is made again with backoff until it answers, each outcome told to the readiness', async () => {
    const logs = captureLogs();
    const told: string[] = [];
    let calls = 0;
    const unreachable = new AppError('NETWORK_ERROR', 'connect ECONNREFUSED');
    const organizationElsewhere = new AppError('ORGANIZATION_NOT_VISIBLE', 'not among those the token sees');
    const delays: number[] = [];
    const watch = watchConnections({
      targets: {
        // Twice unreachable, then the API answers (one source's organization out of reach).
        check: async () => {
          calls++;
          return calls <= 2
            ? [{ sourceId: 'erp', error: unreachable }]
            : [{ sourceId: 'erp', error: organizationElsewhere }];
        },
        budgets: () => [],
      },
      sources,
      redis,
      prefix,
      logger: logs.log,
      readiness: {
        trying: (d) => told.push(`trying ${d}`),
        missing: (d, error) => told.push(`missing ${d}: ${(error as Error).message}`),
        answered: (d) => told.push(`answered ${d}`),
      },
      retryDelayMs: (attempt) => {
        delays.push(attempt);
        return 10;
      },
    });
    await eventually(
      async () => told,
      (t) => t.includes('answered api'),
      { timeoutMs: 2000, what: 'the API answered' },
    );
    await watch.stop();
    expect(calls).toBe(3);
    expect(delays).toEqual([0, 1]);
    expect(told).toEqual([
      'trying api',
      'missing api: connect ECONNREFUSED',
      'trying api',
      'missing api: connect ECONNREFUSED',
      'trying api',
      'answered api',
    ]);
    // The outage is a warning once; the organization out of reach an error once.
    expect(
      logs
        .entries()
        .filter((e) => e.event === 'connections.check')
        .map((e) => [e.level, e.msg]),
    ).toEqual([
      [40, 'connections not checked at start'],
      [50, 'a source cannot sync until its configuration is fixed'],
    ]);
  });
});
