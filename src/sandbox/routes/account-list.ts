/** `GET /accounts`: the account list with its filter allow-list and sorts (spec, "Filtering"). */

import type { FastifyInstance } from 'fastify';
import { compareDecimal } from '../../domain/decimal.js';
import { authOf, requires, type SandboxDeps } from '../context.js';
import { compareStrings } from '../lists/filter-values.js';
import { foldText, type ListDefinition, type ListQuery, listPage } from '../lists/index.js';
import type { Account } from '../model.js';
import { ACCOUNTS_READ } from '../oauth/scopes.js';
import type { SandboxCompat } from '../options.js';
import { accountJson, tagKeys } from '../resources/account-view.js';
import {
  type AccountBalances,
  balancesOf,
  COLLECTION_STATUSES,
  type CollectionStatus,
  collectionStatusOf,
  documentsByAccount,
} from '../resources/derived.js';
import { organizationIdParam } from '../resources/input.js';

/** One account with the values derived for filtering and sorting, computed once per request. */
interface AccountRow {
  account: Account;
  balances: AccountBalances;
  collectionStatus: CollectionStatus;
  /** Ids and names of its tags: a `tags` filter value may be either. */
  tags: string[];
}

const TEXT_EQUALITY = ['contains', 'startsWith', 'equals'] as const;
const LIST = ['containsAny', 'containsAll', 'containsNone', 'isEmpty', 'isNotEmpty'] as const;
const BOOLEAN = ['isTrue', 'isFalse'] as const;
const ENUM = ['is', 'isNot', 'isAnyOf'] as const;
const NULLABLE_ENUM = ['is', 'isNot', 'isAnyOf', 'isEmpty', 'isNotEmpty'] as const;
const NUMBER = ['equals', 'greaterThan', 'lessThan', 'between'] as const;

const byName = (a: AccountRow, b: AccountRow) =>
  compareStrings(foldText(a.account.fullName), foldText(b.account.fullName)) ||
  compareStrings(a.account.id, b.account.id);

export const ACCOUNT_LIST: ListDefinition<AccountRow> = {
  endpoint: '/accounts',
  filters: {
    accountName: { kind: 'text', operators: TEXT_EQUALITY, value: (r) => r.account.fullName },
    tags: { kind: 'list', operators: LIST, value: (r) => r.tags },
    dunningPaused: { kind: 'boolean', operators: BOOLEAN, value: (r) => r.account.dunningPaused },
    collectionStatus: {
      kind: 'enum',
      operators: ENUM,
      enumValues: COLLECTION_STATUSES,
      value: (r) => r.collectionStatus,
    },
    daysOverdue: { kind: 'number', operators: NUMBER, value: (r) => String(r.balances.daysOverdue) },
    overdueInvoiceCount: {
      kind: 'number',
      operators: NUMBER,
      value: (r) => String(r.balances.overdueInvoiceCount),
    },
    overdueBalance: { kind: 'number', operators: NUMBER, value: (r) => r.balances.overdueBalance },
    remainingBalance: { kind: 'number', operators: NUMBER, value: (r) => r.balances.remainingBalance },
    hasPaymentSchedule: { kind: 'boolean', operators: BOOLEAN, value: (r) => r.account.hasPaymentSchedule },
    paymentMethod: { kind: 'text', operators: NULLABLE_ENUM, value: (r) => r.account.paymentMethod },
    collectiveProceeding: {
      kind: 'enum',
      operators: ENUM,
      enumValues: ['Yes', 'No', 'Unknown'],
      value: (r) => r.account.collectiveProceeding,
    },
    // The source's external id, compared exactly (ids are opaque): lets a client find its accounts.
    // What the spec's `source` field compares is not shown: `accountListFor` switches it.
    source: {
      kind: 'text',
      operators: NULLABLE_ENUM,
      caseSensitive: true,
      value: (r) => r.account.source?.sourceId ?? null,
    },
  },
  sorts: {
    fullName: byName,
    overdueInvoiceCount: (a, b) => a.balances.overdueInvoiceCount - b.balances.overdueInvoiceCount,
    overdueBalance: (a, b) => compareDecimal(a.balances.overdueBalance, b.balances.overdueBalance),
    remainingBalance: (a, b) => compareDecimal(a.balances.remainingBalance, b.balances.remainingBalance),
  },
  defaultOrder: byName,
  historical: true,
};

/** The account list with the `source` filter comparing what `compat.accountSourceFilter` says. */
export function accountListFor(compare: SandboxCompat['accountSourceFilter']): ListDefinition<AccountRow> {
  if (compare === 'sourceId') return ACCOUNT_LIST;
  const source = ACCOUNT_LIST.filters.source!;
  return {
    ...ACCOUNT_LIST,
    filters: {
      ...ACCOUNT_LIST.filters,
      source: { ...source, value: (r: AccountRow) => r.account.source?.[compare] ?? null },
    },
  };
}

export function registerAccountListRoute(app: FastifyInstance, deps: SandboxDeps): void {
  const { store } = deps;
  const list = accountListFor(deps.options.compat.accountSourceFilter);
  app.get('/accounts', requires(ACCOUNTS_READ), async (request) => {
    const organizationId = organizationIdParam(request.query);
    store.organizationFor(organizationId, authOf(request).userId);
    const today = store.clock.now();
    const docs = documentsByAccount(store);
    const rows = [...store.accounts.values()]
      .filter((account) => account.organizationId === organizationId)
      .map((account): AccountRow => {
        const own = docs.get(account.id) ?? [];
        return {
          account,
          balances: balancesOf(own, today),
          collectionStatus: collectionStatusOf(account, own),
          tags: tagKeys(store, account.tagIds),
        };
      });
    return listPage(list, rows, request.query as ListQuery, (row) =>
      accountJson(store, row.account, row.balances),
    );
  });
}
