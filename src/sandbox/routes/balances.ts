import type { FastifyInstance } from 'fastify';
import { formatDecimal } from '../../domain/decimal.js';
import { requires, type SandboxDeps } from '../context.js';
import { compareStrings } from '../lists/filter-values.js';
import { type ListDefinition, listPage } from '../lists/index.js';
import { ACCOUNTS_READ } from '../oauth/scopes.js';
import { todayKey } from '../resources/derived.js';
import { registerAccountBalanceRoutes } from './balance-accounts.js';
import {
  type Aging,
  type AgingRow,
  addAging,
  agingJson,
  agingRows,
  agingRowsByAmount,
  agingRowsByName,
  emptyBuckets,
  netOf,
} from './balance-amounts.js';
import { registerOutstandingBalanceRoutes } from './balance-outstanding.js';
import {
  CHOICE_OPERATORS,
  listQueryOf,
  NAME_OPERATORS,
  NUMBER_OPERATORS,
  organizationOfQuery,
} from './balance-query.js';

/** `/aging-balance/accounts`: filters and sorts are sandbox choices (the spec does not show them). */
const AGING_ACCOUNTS: ListDefinition<AgingRow> = {
  endpoint: '/aging-balance/accounts',
  historical: false,
  filters: {
    accountName: { kind: 'text', operators: NAME_OPERATORS, value: (r) => r.account.fullName },
    currencyCode: { kind: 'text', operators: CHOICE_OPERATORS, value: (r) => r.account.currencyCode },
    total: { kind: 'number', operators: NUMBER_OPERATORS, value: (r) => formatDecimal(netOf(r.aging)) },
    over90: {
      kind: 'number',
      operators: NUMBER_OPERATORS,
      value: (r) => formatDecimal(r.aging.buckets.over90),
    },
  },
  sorts: {
    accountName: agingRowsByName,
    total: agingRowsByAmount((r) => netOf(r.aging)),
    over90: agingRowsByAmount((r) => r.aging.buckets.over90),
  },
  defaultOrder: agingRowsByName,
};

/** An account with nothing open and no credit left has no aging row. */
const hasAmounts = (row: AgingRow): boolean =>
  row.aging.unallocatedCredit !== 0n || Object.values(row.aging.buckets).some((v) => v !== 0n);

/**
 * Sums account rows per currency. Credit notes are netted within their own account first (a
 * customer's credit does not pay another customer's invoices), so the organization figures are
 * exactly the sum of the `/aging-balance/accounts` rows.
 */
function byCurrency(rows: readonly AgingRow[]) {
  const totals = new Map<string, Aging>();
  for (const row of rows) {
    const code = row.account.currencyCode;
    const sum = totals.get(code) ?? { buckets: emptyBuckets(), unallocatedCredit: 0n };
    addAging(sum, row.aging);
    totals.set(code, sum);
  }
  return [...totals.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([currencyCode, aging]) => ({ currencyCode, ...agingJson(aging) }));
}

const agingRowJson = (row: AgingRow) => ({
  accountId: row.account.id,
  accountName: row.account.fullName,
  currencyCode: row.account.currencyCode,
  ...agingJson(row.aging),
});

/** Routes of this area, registered under /api/public/v1. */
export function registerBalanceRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  app.get('/aging-balance', requires(ACCOUNTS_READ), async (request) => {
    const organization = organizationOfQuery(request, deps);
    const rows = agingRows(deps.store, organization.id);
    return {
      organizationId: organization.id,
      asOf: todayKey(deps.store.clock.now()),
      currencies: byCurrency(rows),
    };
  });

  app.get('/aging-balance/accounts', requires(ACCOUNTS_READ), async (request) => {
    const organization = organizationOfQuery(request, deps);
    const rows = agingRows(deps.store, organization.id).filter(hasAmounts);
    return listPage(AGING_ACCOUNTS, rows, listQueryOf(request), agingRowJson);
  });

  registerOutstandingBalanceRoutes(app, deps);
  registerAccountBalanceRoutes(app, deps);
}
