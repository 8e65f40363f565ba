import { describe, expect, it } from 'vitest';
import { type ListQuery, listPage, parseFirst } from '../../../src/sandbox/lists/index.js';
import { apiErrorOf, manyThings, type Thing, thing, thingList } from './fixtures.js';

const historical = thingList();
const modern = thingList({ historical: false });
const ids = (page: { nodes: Thing[] }) => page.nodes.map((t) => t.id);
const page = (query: ListQuery, items: Thing[] = manyThings(45), def = historical) =>
  listPage(def, items, query, (t) => t);

function expectError(fn: () => unknown, code: string, message?: RegExp) {
  const err = apiErrorOf(fn);
  expect(err.status).toBe(400);
  expect(err.code).toBe(code);
  if (message) expect(err.message).toMatch(message);
}

describe('first', () => {
  it.each([0, 101, '0', '101', '-1', '2.5', 'ten', '', 1.5])(
    'when first is %j, then it is 400 BAD_PAGINATION saying 1..100',
    (first) => {
      expectError(() => page({ first }), 'BAD_PAGINATION', /first must be an integer from 1 to 100/);
    },
  );

  it('when first is 1 or 100 (string or number), then it is accepted', () => {
    expect(parseFirst('1')).toBe(1);
    expect(parseFirst(100)).toBe(100);
    expect(parseFirst(undefined)).toBeUndefined();
  });

  it('when first is given, then the page holds that many items', () => {
    expect(page({ first: 5 }).nodes).toHaveLength(5);
    expect(page({ first: '100' }).nodes).toHaveLength(45);
  });
});

describe('page size defaults', () => {
  it('when a filtered call omits first, then it returns 20 items', () => {
    expect(page({ filters: 'name:isNotEmpty' }).nodes).toHaveLength(20);
  });

  it('when a sorted call omits first, then it returns 20 items', () => {
    expect(page({ sortBy: 'name' }).nodes).toHaveLength(20);
  });

  it('when a plain call of a historical list omits first, then it streams every item', () => {
    const result = page({}, manyThings(250));
    expect(result.nodes).toHaveLength(250);
    expect(result.pageInfo.endCursor).not.toBeNull();
  });

  it('when a plain historical call continues from a cursor without first, then it returns all the rest', () => {
    const start = page({ first: 10 }, manyThings(250));
    const rest = page({ after: start.pageInfo.endCursor ?? '' }, manyThings(250));
    expect(rest.nodes).toHaveLength(240);
    expect(rest.nodes[0]?.id).toBe('t011');
  });

  it('when a plain call of a non-historical list omits first, then it returns 20 items', () => {
    expect(page({}, manyThings(45), modern).nodes).toHaveLength(20);
  });
});

describe('walking pages', () => {
  it('when pages are followed to the end, then the last non-empty page has an endCursor leading to an empty page', () => {
    const query = { filters: 'name:isNotEmpty', first: 20 };
    const one = page(query);
    const two = page({ ...query, after: one.pageInfo.endCursor ?? '' });
    const three = page({ ...query, after: two.pageInfo.endCursor ?? '' });
    expect([ids(one)[0], ids(two)[0], ids(three)[0]]).toEqual(['t001', 't021', 't041']);
    expect(three.nodes).toHaveLength(5);
    expect(three.pageInfo.endCursor).toMatch(/^v2:[0-9a-f]{16}:45$/);
    const four = page({ ...query, after: three.pageInfo.endCursor ?? '' });
    expect(four).toEqual({ nodes: [], pageInfo: { endCursor: null } });
  });

  it('when the list is empty, then the page is empty with a null endCursor and nothing else', () => {
    expect(page({ first: 5 }, [])).toEqual({ nodes: [], pageInfo: { endCursor: null } });
  });

  it('when items arrive unordered, then an unsorted call serves them in the default order', () => {
    const items = [thing({ id: 'c' }), thing({ id: 'a' }), thing({ id: 'b' })];
    expect(ids(page({}, items))).toEqual(['a', 'b', 'c']);
  });

  it('when nodes are projected, then the projection is applied to each node', () => {
    const result = listPage(historical, manyThings(3), {}, (t) => t.id.toUpperCase());
    expect(result.nodes).toEqual(['T001', 'T002', 'T003']);
  });

  it('when filters are given, then only matching items are paged', () => {
    const items = [
      thing({ id: 'a', status: 'Closed' }),
      thing({ id: 'b' }),
      thing({ id: 'c', status: 'Closed' }),
    ];
    expect(ids(page({ filters: 'status:is:Closed' }, items))).toEqual(['a', 'c']);
  });
});

describe('sorting', () => {
  const items = [
    thing({ id: 'a', name: 'Beta', amount: '5' }),
    thing({ id: 'b', name: 'Alpha', amount: '5' }),
    thing({ id: 'c', name: 'Gamma', amount: '1' }),
  ];

  it('when sortBy is given, then items are sorted by it with the default order breaking ties', () => {
    expect(ids(page({ sortBy: 'amount' }, items))).toEqual(['c', 'a', 'b']);
    expect(ids(page({ sortBy: 'name' }, items))).toEqual(['b', 'a', 'c']);
  });

  it('when sortOrder is desc, then the sort key is reversed but ties keep the default order', () => {
    expect(ids(page({ sortBy: 'amount', sortOrder: 'desc' }, items))).toEqual(['a', 'b', 'c']);
  });

  it('when only sortOrder is given, then the default order is used in that direction', () => {
    expect(ids(page({ sortOrder: 'desc' }, items))).toEqual(['c', 'b', 'a']);
  });

  it('when sortBy is not accepted, then it is 400 BAD_REQUEST', () => {
    expectError(() => page({ sortBy: 'color' }), 'BAD_REQUEST', /sortBy "color"/);
    expectError(() => page({ sortBy: 'toString' }), 'BAD_REQUEST');
  });

  it('when sortOrder is neither asc nor desc, then it is 400 BAD_REQUEST', () => {
    expectError(() => page({ sortBy: 'name', sortOrder: 'DESC' }), 'BAD_REQUEST', /asc or desc/);
  });

  it('when the list has no sorts, then any sort parameter is 400 BAD_REQUEST', () => {
    const unsortable = thingList({ sorts: undefined });
    expectError(() => page({ sortBy: 'name' }, [], unsortable), 'BAD_REQUEST', /cannot be sorted/);
  });

  it('when sorted pages are followed, then the next page continues the sorted order', () => {
    const sorted = { sortBy: 'name', first: 2 };
    const one = page(sorted, items);
    expect(ids(page({ ...sorted, after: one.pageInfo.endCursor ?? '' }, items))).toEqual(['c']);
  });
});

describe('cursor binding', () => {
  const filtered = { filters: 'name:isNotEmpty;status:isAnyOf:Open,Closed', first: 5 };
  const cursor = page(filtered).pageInfo.endCursor ?? '';

  it('when conditions and values are reordered on replay, then the cursor is accepted', () => {
    const reordered = { filters: 'status:isAnyOf:Closed,Open;name:isNotEmpty', first: 5 };
    expect(page({ ...reordered, after: cursor }).nodes[0]?.id).toBe('t006');
    expect(page(reordered).pageInfo.endCursor).toBe(cursor);
  });

  it('when the cursor is replayed with other filters, then it is 400 LIST_CURSOR_INVALID', () => {
    expectError(() => page({ filters: 'name:isNotEmpty', after: cursor }), 'LIST_CURSOR_INVALID');
  });

  it('when the cursor is replayed with a sort added or changed, then it is 400 LIST_CURSOR_INVALID', () => {
    expectError(() => page({ ...filtered, sortBy: 'name', after: cursor }), 'LIST_CURSOR_INVALID');
    const sortedCursor = page({ sortBy: 'name' }).pageInfo.endCursor ?? '';
    expectError(
      () => page({ sortBy: 'name', sortOrder: 'desc', after: sortedCursor }),
      'LIST_CURSOR_INVALID',
    );
  });

  it('when an explicit asc is added to the same sortBy, then the cursor is still accepted', () => {
    const sortedCursor = page({ sortBy: 'name' }).pageInfo.endCursor ?? '';
    expect(page({ sortBy: 'name', sortOrder: 'asc', after: sortedCursor }).nodes).toHaveLength(20);
  });

  it('when the cursor is replayed on another endpoint, then it is 400 LIST_CURSOR_INVALID', () => {
    const other = thingList({ endpoint: '/others' });
    expectError(() => page({ ...filtered, after: cursor }, manyThings(45), other), 'LIST_CURSOR_INVALID');
  });

  it('when a v2 cursor is replayed on a plain historical call, then it is 400 LIST_CURSOR_INVALID', () => {
    expectError(() => page({ after: cursor }), 'LIST_CURSOR_INVALID', /bound to filters or a sort/);
  });

  it('when the cursor is malformed, then it is 400 LIST_CURSOR_INVALID', () => {
    expectError(() => page({ ...filtered, after: 'garbage!' }), 'LIST_CURSOR_INVALID');
    expectError(() => page({ after: '' }), 'LIST_CURSOR_INVALID');
  });
});

describe('historical cursors', () => {
  const plainCursor = page({ first: 10 }).pageInfo.endCursor ?? '';

  it('when a plain call of a historical list pages, then its cursor is opaque and not v2', () => {
    expect(plainCursor).not.toMatch(/^v2:/);
    expect(page({ first: 10, after: plainCursor }).nodes[0]?.id).toBe('t011');
  });

  it('when a historical cursor is used on a filtered or sorted call, then it is 400 LIST_CURSOR_INVALID', () => {
    expectError(() => page({ filters: 'name:isNotEmpty', after: plainCursor }), 'LIST_CURSOR_INVALID');
    expectError(() => page({ sortBy: 'name', after: plainCursor }), 'LIST_CURSOR_INVALID');
  });

  it('when a historical cursor of another endpoint is used, then it is 400 LIST_CURSOR_INVALID', () => {
    const other = thingList({ endpoint: '/others' });
    expectError(
      () => page({ after: plainCursor }, manyThings(45), other),
      'LIST_CURSOR_INVALID',
      /another endpoint/,
    );
  });

  it('when a non-historical list is called plainly, then it issues v2 cursors and refuses historical ones', () => {
    const first = page({ first: 10 }, manyThings(45), modern);
    expect(first.pageInfo.endCursor).toMatch(/^v2:[0-9a-f]{16}:10$/);
    expect(page({ after: first.pageInfo.endCursor ?? '' }, manyThings(45), modern).nodes[0]?.id).toBe('t011');
    expectError(() => page({ after: plainCursor }, manyThings(45), modern), 'LIST_CURSOR_INVALID');
  });

  it('when an empty filters string is given, then the call counts as plain', () => {
    expect(page({ filters: '' }, manyThings(45)).nodes).toHaveLength(45);
    expect(page({ filters: '', after: plainCursor }).nodes[0]?.id).toBe('t011');
  });
});
