import { describe, expect, it } from 'vitest';
import { connectionGroups, showsConnectionHeadings } from '../../../src/dashboard/connection-groups.js';
import type { ToldBudget } from '../../../src/dashboard/token-budgets.js';

const ORG_1 = '11111111-1111-4111-8111-111111111111';
const ORG_2 = '22222222-2222-4222-8222-222222222222';
const ORG_3 = '33333333-3333-4333-8333-333333333333';
const told = (organizations: string[]): ToldBudget => ({
  organizations,
  toldAt: new Date('2026-01-15T10:00:00Z'),
  use: { requestsInWindow: 3, quota: 300, windowSeconds: 60, waiting: [] },
});
const connections = [
  { id: 'default', baseUrl: 'https://receivables.example.com:8443/api', organizationId: null },
  { id: 'acme', baseUrl: 'https://acme.example.net', organizationId: ORG_3 },
];

describe('connectionGroups', () => {
  it("when sources name no organization, then it is their connection's, else their last run's through the same connection, else the token's only one, else unresolved", () => {
    const groups = connectionGroups({
      sources: [
        { id: 'named', organizationId: ORG_1 },
        { id: 'ran', connection: undefined },
        { id: 'ran-elsewhere' },
        { id: 'acme-erp', connection: 'acme' },
      ],
      connections,
      lastRuns: new Map([
        ['ran', { connectionId: 'default', organizationId: ORG_2 }],
        ['ran-elsewhere', { connectionId: 'acme', organizationId: ORG_3 }],
      ]),
      budgets: { available: true, byConnection: new Map([['default', told([ORG_1, ORG_2])]]) },
    });
    expect(groups.map((g) => ({ id: g.id, host: g.host, organizations: g.organizations }))).toEqual([
      {
        id: 'default',
        host: 'receivables.example.com:8443',
        organizations: [
          { id: ORG_1, from: 'source', sources: ['named'] },
          { id: ORG_2, from: 'last-run', sources: ['ran'] },
          // Its last run went through another connection: that organization says nothing now.
          { id: null, from: 'unresolved', sources: ['ran-elsewhere'] },
        ],
      },
      {
        id: 'acme',
        host: 'acme.example.net',
        organizations: [{ id: ORG_3, from: 'connection', sources: ['acme-erp'] }],
      },
    ]);
  });

  it('when the worker told that the token sees one organization, then the sources naming none are grouped under it', () => {
    const [group] = connectionGroups({
      sources: [{ id: 'a' }, { id: 'b', organizationId: ORG_1 }],
      connections: [],
      lastRuns: new Map(),
      budgets: { available: true, byConnection: new Map([['default', told([ORG_1])]]) },
    });
    expect(group?.organizations).toEqual([{ id: ORG_1, from: 'token', sources: ['a', 'b'] }]);
    expect(group?.baseUrl).toBeNull();
    expect(group?.budgetStatus).toBe('ok');
  });

  it('when budgets are absent, unavailable or not told, then each group says which', () => {
    const statusOf = (budgets: Parameters<typeof connectionGroups>[0]['budgets']) =>
      connectionGroups({ sources: [{ id: 'a' }], connections, lastRuns: new Map(), budgets }).map((g) => [
        g.budgetStatus,
        g.budget,
      ]);
    expect(statusOf(null)).toEqual([['unknown', null]]);
    expect(statusOf({ available: false })).toEqual([['unavailable', null]]);
    expect(statusOf({ available: true, byConnection: new Map() })).toEqual([['not-told', null]]);
  });

  it('when there is only the default connection, then no connection heading is shown; another connection shows them', () => {
    const of = (sources: Array<{ id: string; connection?: string }>) =>
      showsConnectionHeadings(connectionGroups({ sources, connections, lastRuns: new Map(), budgets: null }));
    expect(of([{ id: 'a' }, { id: 'b' }])).toBe(false);
    expect(of([])).toBe(false);
    expect(of([{ id: 'a', connection: 'acme' }])).toBe(true);
    expect(of([{ id: 'a' }, { id: 'b', connection: 'acme' }])).toBe(true);
  });
});
