import type { FastifyInstance } from 'fastify';
import { formatDecimal } from '../../domain/decimal.js';
import { requires, type SandboxDeps } from '../context.js';
import { type ListDefinition, listPage } from '../lists/index.js';
import { ACCOUNTS_READ } from '../oauth/scopes.js';
import {
  type Aging,
  type AgingRow,
  agingRows,
  agingRowsByAmount,
  agingRowsByName,
  netOf,
} from './balance-amounts.js';
import {
  CHOICE_OPERATORS,
  listQueryOf,
  NAME_OPERATORS,
  NUMBER_OPERATORS,
  organizationOfQuery,
} from './balance-query.js';

/** What is past due once the account's credit notes were applied (every bucket but `notDue`). */
const overdueOf = ({ buckets }: Aging) =>
  buckets.days1To30 + buckets.days31To60 + buckets.days61To90 + buckets.over90;

/**
 * `/customer-outstanding-balances` (the spec names it only): one row per account of the
 * organization, zero balances included, with the outstanding amount per currency. An account has
 * a single currency, so `outstandingBalances` holds one entry; it is a list so the row shape
 * survives multi-currency customers.
 */
const OUTSTANDING: ListDefinition<AgingRow> = {
  endpoint: '/customer-outstanding-balances',
  historical: false,
  filters: {
    accountName: { kind: 'text', operators: NAME_OPERATORS, value: (r) => r.account.fullName },
    currencyCode: { kind: 'text', operators: CHOICE_OPERATORS, value: (r) => r.account.currencyCode },
    outstandingAmount: {
      kind: 'number',
      operators: NUMBER_OPERATORS,
      value: (r) => formatDecimal(netOf(r.aging)),
    },
    overdueAmount: {
      kind: 'number',
      operators: NUMBER_OPERATORS,
      value: (r) => formatDecimal(overdueOf(r.aging)),
    },
  },
  sorts: {
    accountName: agingRowsByName,
    outstandingAmount: agingRowsByAmount((r) => netOf(r.aging)),
    overdueAmount: agingRowsByAmount((r) => overdueOf(r.aging)),
  },
  defaultOrder: agingRowsByName,
};

const outstandingJson = (row: AgingRow) => ({
  accountId: row.account.id,
  accountName: row.account.fullName,
  outstandingBalances: [
    {
      currencyCode: row.account.currencyCode,
      outstandingAmount: formatDecimal(netOf(row.aging)),
      overdueAmount: formatDecimal(overdueOf(row.aging)),
      unallocatedCredit: formatDecimal(row.aging.unallocatedCredit),
    },
  ],
});

export function registerOutstandingBalanceRoutes(app: FastifyInstance, deps: SandboxDeps): void {
  app.get('/customer-outstanding-balances', requires(ACCOUNTS_READ), async (request) => {
    const organization = organizationOfQuery(request, deps);
    const rows = agingRows(deps.store, organization.id);
    return listPage(OUTSTANDING, rows, listQueryOf(request), outstandingJson);
  });
}
