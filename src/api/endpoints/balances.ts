import type { Page } from '../pagination.js';
import { anObject, pageOf } from '../response-shapes.js';
import type { AgingBalance, AgingBalanceRow, OutstandingBalance } from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ListParams,
  listQuery,
  type ReadOptions,
} from './shared.js';

/** Parameters of the organization-wide balance lists (fields and sorts not shown: `open` filters). */
export interface BalanceListParams extends ListParams<'open'> {
  organizationId: string;
}

/** Aging balances and outstanding balances of an organization. */
export class BalancesEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  /** Net outstanding amounts by currency and aging bucket; unallocated credit reduces the oldest buckets first. */
  aging(organizationId: string, options?: ReadOptions): Promise<AgingBalance> {
    return get(this.#ctx, { path: '/aging-balance', query: { organizationId }, expect: anObject }, options);
  }

  /** One page of `/aging-balance/accounts`: one currency-specific aging row per account. */
  agingAccountsPage(params: BalanceListParams, options?: ReadOptions): Promise<Page<AgingBalanceRow>> {
    const query = listQuery(params, { organizationId: params.organizationId });
    return get(this.#ctx, { path: '/aging-balance/accounts', query, expect: pageOf(anObject) }, options);
  }

  agingAccounts(params: BalanceListParams): AsyncGenerator<AgingBalanceRow, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.agingAccountsPage(p));
  }

  /** One page of `/customer-outstanding-balances` (named by the spec, parameters not shown). */
  outstandingPage(params: BalanceListParams, options?: ReadOptions): Promise<Page<OutstandingBalance>> {
    const query = listQuery(params, { organizationId: params.organizationId });
    return get(
      this.#ctx,
      { path: '/customer-outstanding-balances', query, expect: pageOf(anObject) },
      options,
    );
  }

  outstanding(params: BalanceListParams): AsyncGenerator<OutstandingBalance, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.outstandingPage(p));
  }
}
