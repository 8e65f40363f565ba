/** A small fake resource exercising every field kind of the filter language. */

import { ApiError } from '../../../src/sandbox/errors.js';
import type { FilterAllowList, ListDefinition } from '../../../src/sandbox/lists/index.js';

export interface Thing {
  id: string;
  name: string | null;
  sourceId: string | null;
  status: 'Open' | 'Closed' | 'Paused';
  paused: boolean | null;
  due: string | null;
  amount: string | null;
  tags: string[] | null;
}

export function thing(overrides: Partial<Thing> & { id: string }): Thing {
  return {
    name: 'Name',
    sourceId: null,
    status: 'Open',
    paused: false,
    due: null,
    amount: null,
    tags: [],
    ...overrides,
  };
}

export const thingFilters: FilterAllowList<Thing> = {
  name: {
    kind: 'text',
    operators: ['contains', 'startsWith', 'equals', 'is', 'isNot', 'isAnyOf', 'isEmpty', 'isNotEmpty'],
    value: (t) => t.name,
  },
  sourceId: {
    kind: 'text',
    operators: ['is', 'isAnyOf', 'isEmpty', 'isNotEmpty', 'contains'],
    value: (t) => t.sourceId,
    caseSensitive: true,
  },
  status: {
    kind: 'enum',
    operators: ['is', 'isNot', 'isAnyOf'],
    value: (t) => t.status,
    enumValues: ['Open', 'Closed', 'Paused'],
  },
  paused: { kind: 'boolean', operators: ['isTrue', 'isFalse', 'isEmpty'], value: (t) => t.paused },
  due: {
    kind: 'date',
    operators: ['on', 'before', 'after', 'between', 'isEmpty', 'isNotEmpty'],
    value: (t) => t.due,
  },
  amount: {
    kind: 'number',
    operators: ['equals', 'greaterThan', 'lessThan', 'between', 'isEmpty'],
    value: (t) => t.amount,
  },
  tags: {
    kind: 'list',
    operators: ['containsAny', 'containsAll', 'containsNone', 'isEmpty', 'isNotEmpty'],
    value: (t) => t.tags,
  },
};

const byId = (a: Thing, b: Thing) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function thingList(overrides: Partial<ListDefinition<Thing>> = {}): ListDefinition<Thing> {
  return {
    endpoint: '/things',
    filters: thingFilters,
    sorts: {
      name: (a, b) => (a.name ?? '').localeCompare(b.name ?? ''),
      amount: (a, b) => Number(a.amount ?? 0) - Number(b.amount ?? 0),
    },
    defaultOrder: byId,
    historical: true,
    ...overrides,
  };
}

/** `count` things with ids `t001`, `t002`, ... (zero-padded so they sort by id). */
export function manyThings(count: number): Thing[] {
  return Array.from({ length: count }, (_, i) => thing({ id: `t${String(i + 1).padStart(3, '0')}` }));
}

/** Runs `fn` and returns the ApiError it throws (fails when it throws nothing or something else). */
export function apiErrorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError, nothing was thrown');
}
