import { describe, expect, it } from 'vitest';
import { PaginationError } from '../../../src/api/errors.js';
import { collect, type Page, paginate, paginateItems } from '../../../src/api/pagination.js';

/** A fake list: the page served for each `after` value ('' = first page). */
function fakeList(pages: Record<string, Page<number>>) {
  const calls: (string | undefined)[] = [];
  const fetchPage = async (after: string | undefined) => {
    calls.push(after);
    const page = pages[after ?? ''];
    if (!page) throw new Error(`unexpected cursor ${after}`);
    return page;
  };
  return { calls, fetchPage };
}

const page = (nodes: number[], endCursor: string | null): Page<number> => ({
  nodes,
  pageInfo: { endCursor },
});

describe('paginate', () => {
  it('when the last non-empty page carries a cursor, then the next (empty) page ends the list', async () => {
    const list = fakeList({ '': page([1, 2], 'c1'), c1: page([3], 'c2'), c2: page([], null) });
    expect(await collect(paginateItems(list.fetchPage))).toEqual([1, 2, 3]);
    expect(list.calls).toEqual([undefined, 'c1', 'c2']);
  });

  it('when a non-empty page has no cursor, then the list ends there (it cannot be continued)', async () => {
    const list = fakeList({ '': page([1], 'c1'), c1: page([2], null) });
    expect(await collect(paginateItems(list.fetchPage))).toEqual([1, 2]);
    expect(list.calls).toEqual([undefined, 'c1']);
  });

  it('when the server repeats a cursor, then PaginationError instead of looping', async () => {
    const list = fakeList({ '': page([1], 'c1'), c1: page([2], 'c2'), c2: page([3], 'c1') });
    const seen: number[] = [];
    await expect(async () => {
      for await (const item of paginateItems(list.fetchPage)) seen.push(item);
    }).rejects.toThrow(PaginationError);
    expect(seen).toEqual([1, 2, 3]);
    expect(list.calls).toEqual([undefined, 'c1', 'c2']);
  });

  it('when the first page is empty, then nothing is yielded', async () => {
    const list = fakeList({ '': page([], 'c-ignored') });
    expect(await collect(paginate(list.fetchPage))).toEqual([]);
  });

  it('when resuming after a cursor, then iteration starts there and that cursor counts as seen', async () => {
    const list = fakeList({ c5: page([6], 'c5') });
    await expect(collect(paginateItems(list.fetchPage, { after: 'c5' }))).rejects.toThrow(PaginationError);
    expect(list.calls).toEqual(['c5']);
  });

  it('when the caller stops early, then no further page is fetched', async () => {
    const list = fakeList({ '': page([1, 2], 'c1'), c1: page([3], 'c2') });
    for await (const item of paginateItems(list.fetchPage)) if (item === 1) break;
    expect(list.calls).toEqual([undefined]);
  });
});
