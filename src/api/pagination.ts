import type { Logger } from 'pino';
import { PaginationError } from './errors.js';

/** One page of a cursor list, as every paged list of the API answers. */
export interface Page<T> {
  nodes: T[];
  pageInfo: { endCursor: string | null };
}

/** Fetches the page after `after` (undefined = the first page). */
export type FetchPage<T> = (after: string | undefined) => Promise<Page<T>>;

export interface PaginateOptions {
  /** Start after this cursor instead of at the first page (resuming a checkpoint). */
  after?: string | undefined;
  /** Told, at debug level, when a list ends on a missing cursor. */
  logger?: Logger | undefined;
}

/**
 * The pages of a cursor list, in order. Follows the spec's contract to the letter:
 * - an empty `nodes` is the only reliable end, so a non-empty page carrying a cursor is followed
 *   (the last non-empty page usually does carry one);
 * - a non-empty page without a cursor cannot be continued, so the list ends there too;
 * - a cursor the server already gave would loop forever: `PaginationError` instead.
 * Pages are fetched lazily, one at a time, as the caller iterates.
 *
 * @example
 * for await (const page of paginate((after) => client.accounts.listPage({ organizationId, after }))) {
 *   await checkpoint(page.pageInfo.endCursor);
 * }
 */
export async function* paginate<T>(
  fetchPage: FetchPage<T>,
  options: PaginateOptions = {},
): AsyncGenerator<Page<T>, void, undefined> {
  const seen = new Set<string>();
  let after = options.after;
  if (after !== undefined) seen.add(after);
  for (let index = 0; ; index++) {
    const page = await fetchPage(after);
    if (page.nodes.length === 0) return;
    yield page;
    const cursor = page.pageInfo?.endCursor ?? null;
    if (cursor === null || cursor === '') {
      options.logger?.debug({ page: index }, 'list ended on a page without endCursor');
      return;
    }
    if (seen.has(cursor)) {
      throw new PaginationError(
        `page ${index + 1} returned a cursor already seen; stopping instead of looping forever`,
      );
    }
    seen.add(cursor);
    after = cursor;
  }
}

/** The items of every page, flattened; same stop rules as `paginate`. */
export async function* paginateItems<T>(
  fetchPage: FetchPage<T>,
  options: PaginateOptions = {},
): AsyncGenerator<T, void, undefined> {
  for await (const page of paginate(fetchPage, options)) yield* page.nodes;
}

/** Collects an async iterable into an array (for short lists and tests). */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
