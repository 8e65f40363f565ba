import type { Page } from '../pagination.js';
import { accountShape, anObject, pageOf } from '../response-shapes.js';
import type {
  Account,
  AccountSortBy,
  CreateAccountInput,
  Dunning,
  FinancialOverview,
  LinkSourceInput,
  UpdateAccountInput,
} from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ListParams,
  listQuery,
  type ReadOptions,
  segment,
  type WriteOptions,
  write,
} from './shared.js';

export interface AccountListParams extends ListParams<'accounts', AccountSortBy> {
  organizationId: string;
}

const accountPath = (accountId: string, rest = '') => `/accounts/${segment(accountId)}${rest}`;

/** `/accounts/*`: customer accounts, their source reference, tags, dunning and financial overview. */
export class AccountsEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  /**
   * One page of `GET /accounts`. Without `first`, a call with filters or a sort gets 20 items and a
   * plain call streams everything (the historical behaviour).
   */
  listPage(params: AccountListParams, options?: ReadOptions): Promise<Page<Account>> {
    const query = listQuery(params, { organizationId: params.organizationId });
    return get(this.#ctx, { path: '/accounts', query, expect: pageOf(accountShape) }, options);
  }

  /**
   * Every account matching `params`, 100 per page unless `first` is given.
   *
   * @example
   * for await (const account of client.accounts.list({ organizationId, filters: accountFilters().where('tags', 'isEmpty') }))
   *   console.log(account.fullName);
   */
  list(params: AccountListParams): AsyncGenerator<Account, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.listPage(p));
  }

  /** Creates an account; with `source` the source is linked (connectorType `Custom`) in the same request. */
  create(input: CreateAccountInput, options?: WriteOptions): Promise<Account> {
    return write(
      this.#ctx,
      { method: 'POST', path: '/accounts', body: { json: input }, expect: accountShape },
      options,
    );
  }

  get(accountId: string, options?: ReadOptions): Promise<Account> {
    return get(this.#ctx, { path: accountPath(accountId), expect: accountShape }, options);
  }

  update(accountId: string, input: UpdateAccountInput, options?: WriteOptions): Promise<Account> {
    return write(
      this.#ctx,
      { method: 'PUT', path: accountPath(accountId), body: { json: input }, expect: accountShape },
      options,
    );
  }

  /** Permanent: removes all associated data. */
  async delete(accountId: string, options?: WriteOptions): Promise<void> {
    await write(this.#ctx, { method: 'DELETE', path: accountPath(accountId) }, options);
  }

  /** The balance explanation with every past and future invoice installment. */
  financialOverview(accountId: string, options?: ReadOptions): Promise<FinancialOverview> {
    return get(this.#ctx, { path: accountPath(accountId, '/financial-overview'), expect: anObject }, options);
  }

  /** The dunning view of one account, which carries its `collectionStatus`. */
  dunning(accountId: string, options?: ReadOptions): Promise<Dunning> {
    return get(this.#ctx, { path: accountPath(accountId, '/dunning'), expect: anObject }, options);
  }

  /**
   * `PUT /accounts/{id}/source`: links a `Custom` source; linking the same source again only moves
   * `lastUpdate`; a different source must be unlinked first.
   */
  linkSource(accountId: string, input: LinkSourceInput, options?: WriteOptions): Promise<Account> {
    return write(
      this.#ctx,
      { method: 'PUT', path: accountPath(accountId, '/source'), body: { json: input }, expect: accountShape },
      options,
    );
  }

  /**
   * `PATCH /accounts/{id}/source`: sets the source's `lastUpdate` (default now). An account without
   * a source answers 404 or 400 (the spec gives both).
   */
  touchSource(
    accountId: string,
    input: { lastUpdate?: string } = {},
    options?: WriteOptions,
  ): Promise<Account> {
    return write(
      this.#ctx,
      {
        method: 'PATCH',
        path: accountPath(accountId, '/source'),
        body: { json: input },
        expect: accountShape,
      },
      options,
    );
  }

  /** `DELETE /accounts/{id}/source`: the account becomes an orphan with `lastUnlinkedSource` set. */
  async unlinkSource(accountId: string, options?: WriteOptions): Promise<void> {
    await write(this.#ctx, { method: 'DELETE', path: accountPath(accountId, '/source') }, options);
  }

  /**
   * Attaches existing tags in order (body `{tagIds}`, the field name being the sandbox's choice):
   * the first unknown tag stops the request and the ones before it stay attached.
   */
  async attachTags(accountId: string, tagIds: readonly string[], options?: WriteOptions): Promise<void> {
    await write(
      this.#ctx,
      { method: 'POST', path: accountPath(accountId, '/tags'), body: { json: { tagIds } } },
      options,
    );
  }

  /** Detaches one tag from the account; the tag itself is kept. */
  async detachTag(accountId: string, tagId: string, options?: WriteOptions): Promise<void> {
    await write(
      this.#ctx,
      { method: 'DELETE', path: accountPath(accountId, `/tags/${segment(tagId)}`) },
      options,
    );
  }
}
