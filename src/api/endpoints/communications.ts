import type { Page } from '../pagination.js';
import { anObject, pageOf } from '../response-shapes.js';
import type { Communication, CommunicationSortBy } from '../types.js';
import {
  type EndpointContext,
  get,
  iterate,
  type ListParams,
  listQuery,
  type ReadOptions,
  segment,
} from './shared.js';

export interface CommunicationListParams extends ListParams<'communications', CommunicationSortBy> {
  organizationId: string;
  accountId?: string | undefined;
}

/** The organization-wide channel lists the spec names (parameters not shown: `open` filters). */
export type ChannelList =
  | 'emails'
  | 'incoming-emails'
  | 'outgoing-emails'
  | 'incoming-email-communications'
  | 'outgoing-email-communications';

export interface ChannelListParams extends ListParams<'open'> {
  organizationId: string;
  accountId?: string | undefined;
}

/** The account-scoped communication lists. */
export type AccountChannelList = 'incoming-email-communications' | 'outgoing-email-communications';

export type AccountChannelListParams = ListParams<'open'>;

/**
 * Communications, incoming and outgoing, joined to account and contact. `GET /communications`
 * items carry `accountDeletedAt`; the channel and account-scoped lists carry `accountDeleted`.
 */
export class CommunicationsEndpoint {
  readonly #ctx: EndpointContext;

  constructor(ctx: EndpointContext) {
    this.#ctx = ctx;
  }

  listPage(params: CommunicationListParams, options?: ReadOptions): Promise<Page<Communication>> {
    const extra = { organizationId: params.organizationId, accountId: params.accountId };
    const query = listQuery(params, extra);
    return get(this.#ctx, { path: '/communications', query, expect: pageOf(anObject) }, options);
  }

  list(params: CommunicationListParams): AsyncGenerator<Communication, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.listPage(p));
  }

  channelPage(
    channel: ChannelList,
    params: ChannelListParams,
    options?: ReadOptions,
  ): Promise<Page<Communication>> {
    const extra = { organizationId: params.organizationId, accountId: params.accountId };
    return get(
      this.#ctx,
      { path: `/${channel}`, query: listQuery(params, extra), expect: pageOf(anObject) },
      options,
    );
  }

  channel(channel: ChannelList, params: ChannelListParams): AsyncGenerator<Communication, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.channelPage(channel, p));
  }

  /** A list of one account; it still answers after the account was deleted (communications survive it). */
  accountChannelPage(
    accountId: string,
    channel: AccountChannelList,
    params: AccountChannelListParams = {},
    options?: ReadOptions,
  ): Promise<Page<Communication>> {
    const path = `/accounts/${segment(accountId)}/${channel}`;
    return get(this.#ctx, { path, query: listQuery(params), expect: pageOf(anObject) }, options);
  }

  accountChannel(
    accountId: string,
    channel: AccountChannelList,
    params: AccountChannelListParams = {},
  ): AsyncGenerator<Communication, void, undefined> {
    return iterate(this.#ctx, params, (p) => this.accountChannelPage(accountId, channel, p));
  }
}
