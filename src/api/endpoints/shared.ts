import type { Logger } from 'pino';
import type { FilterBuilder, FilterResource } from '../filters.js';
import { type Page, paginateItems } from '../pagination.js';
import type { QueryValue, Requester, RequestOptions } from '../requests.js';
import type { PageParams, SortOrder } from '../types.js';

/** What every endpoint group is built with. */
export interface EndpointContext {
  http: Requester;
  logger: Logger;
}

/** Options of a read call. */
export interface ReadOptions {
  signal?: AbortSignal | undefined;
}

/** Options of a write call. */
export interface WriteOptions extends ReadOptions {
  /**
   * The Idempotency-Key to send; persist it before calling so that a retry after a crash reuses it.
   * Default: a new random key per call (reused by every automatic retry of that call).
   */
  idempotencyKey?: string | undefined;
}

/** Page size used by the iterating `list` methods when the caller gives none. */
export const DEFAULT_ITERATION_PAGE_SIZE = 100;

/** Parameters of a filterable, sortable cursor list. */
export interface ListParams<R extends FilterResource, S extends string = string> extends PageParams {
  filters?: FilterBuilder<R> | undefined;
  sortBy?: S | undefined;
  sortOrder?: SortOrder | undefined;
}

/** Encodes one path segment (ids, e-mail addresses). */
export const segment = (value: string): string => encodeURIComponent(value);

/** The query of a list call: page, filters (left out when empty), sort, plus endpoint parameters. */
export function listQuery(
  params: ListParams<FilterResource>,
  extra: Record<string, QueryValue> = {},
): Record<string, QueryValue> {
  return {
    ...extra,
    first: params.first,
    after: params.after,
    filters: params.filters && !params.filters.isEmpty ? params.filters.toString() : undefined,
    sortBy: params.sortBy,
    sortOrder: params.sortOrder,
  };
}

/** A GET: its path, query and what its answer must hold (see `RequestOptions.expect`). */
export type ReadRequest = Pick<RequestOptions, 'path' | 'query' | 'expect'>;

/** One GET returning its data, checked against `request.expect`. */
export async function get<T>(
  ctx: EndpointContext,
  request: ReadRequest,
  options: ReadOptions = {},
): Promise<T> {
  return (await ctx.http.send<T>({ ...request, method: 'GET', signal: options.signal })).data;
}

/**
 * One write returning its data (undefined for 204), checked against `request.expect` when the
 * caller reads the answer (a create's `id`).
 */
export async function write<T>(
  ctx: EndpointContext,
  request: Omit<RequestOptions, 'signal' | 'idempotencyKey'>,
  options: WriteOptions = {},
): Promise<T> {
  const result = await ctx.http.send<T>({
    ...request,
    idempotencyKey: options.idempotencyKey,
    signal: options.signal,
  });
  return result.data;
}

/**
 * Every item of a list, page after page (see `paginate` for the stop rules), fetched with
 * `first` = 100 unless the caller chose a size.
 */
export function iterate<T, P extends PageParams>(
  ctx: EndpointContext,
  params: P,
  fetchPage: (params: P) => Promise<Page<T>>,
): AsyncGenerator<T, void, undefined> {
  const first = params.first ?? DEFAULT_ITERATION_PAGE_SIZE;
  return paginateItems((after) => fetchPage({ ...params, first, after }), {
    after: params.after,
    logger: ctx.logger,
  });
}
