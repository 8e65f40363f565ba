import type { Page } from '../pagination.js';
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
    return get(this.#ctx, '/aging-balance', { organizationId }, options);
  }

  /** One page of `/aging-balance/accounts`: one currency-specific aging row per account. */
  agingAccountsPage(params: BalanceListParams, options?: ReadOptions): Promise<Page<AgingBalanceRow>> {
    return get(
      this.#ctx,
      '/aging-balance/accounts',
      listQuery(params, { organizationId: params.organizationId }),
      options,
    );
  }

  agingAccounts(params: BalanceListParams): AsyncGenerator<AgingBalanceRow, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.agingAccountsPage(p));
  }

  /** One page of `/customer-outstanding-balances` (named by the spec, parameters not shown). */
  outstandingPage(params: BalanceListParams, options?: ReadOptions): Promise<Page<OutstandingBalance>> {
    return get(
      this.#ctx,
      '/customer-outstanding-balances',
      listQuery(params, { organizationId: params.organizationId }),
      options,
    );
  }

  outstanding(params: BalanceListParams): AsyncGenerator<OutstandingBalance, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.outstandingPage(p));
  }
}
