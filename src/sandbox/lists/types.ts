/** The list contract of the Public API: filter allow-lists, sorts and cursor pagination. */

export type Operator =
  | 'contains'
  | 'startsWith'
  | 'equals'
  | 'is'
  | 'isNot'
  | 'isAnyOf'
  | 'isTrue'
  | 'isFalse'
  | 'on'
  | 'before'
  | 'after'
  | 'between'
  | 'greaterThan'
  | 'lessThan'
  | 'isEmpty'
  | 'isNotEmpty'
  | 'containsAny'
  | 'containsAll'
  | 'containsNone';

/**
 * How a field's values compare. `number` values are decimal strings (or integers as strings),
 * `date` values are `YYYY-MM-DD`, `list` values are arrays of strings (tag ids or names).
 */
export type FieldKind = 'text' | 'enum' | 'boolean' | 'date' | 'number' | 'list';

export type FieldValue = string | boolean | readonly string[] | null;

export interface FilterField<T> {
  kind: FieldKind;
  /** The operators this field accepts; any other yields 400 LIST_FILTER_INVALID. */
  operators: readonly Operator[];
  /** The value of the field on one item. */
  value: (item: T) => FieldValue;
  /** Text compares ignoring case and accents, unless this is set (sourceId). */
  caseSensitive?: boolean;
  /** For `enum` fields: the accepted values (others yield LIST_FILTER_INVALID). */
  enumValues?: readonly string[];
}

export type FilterAllowList<T> = Readonly<Record<string, FilterField<T>>>;

export interface ListDefinition<T> {
  /** The endpoint path the cursors are bound to, e.g. `/accounts`. */
  endpoint: string;
  filters: FilterAllowList<T>;
  /** Accepted `sortBy` values; absent = the list cannot be sorted (a `sortBy` yields 400). */
  sorts?: Readonly<Record<string, (a: T, b: T) => number>>;
  /** The order when no `sortBy` is given (also the default sort key when sorting). */
  defaultOrder: (a: T, b: T) => number;
  /**
   * Accounts, invoices and credit notes: opaque historical cursors on unfiltered, unsorted calls,
   * and a plain call (no filters, no sort, no `first`) returns everything.
   */
  historical: boolean;
}

/** The raw query parameters of a list call (strings as they arrive). */
export interface ListQuery {
  first?: string | number | undefined;
  after?: string | undefined;
  filters?: string | undefined;
  sortBy?: string | undefined;
  sortOrder?: string | undefined;
}

export interface Page<R> {
  nodes: R[];
  pageInfo: { endCursor: string | null };
}

/**
 * One parsed `filters` condition: the field name, its operator and its values, already
 * percent-decoded and validated against the field's allow-list entry.
 */
export interface Condition {
  field: string;
  operator: Operator;
  values: readonly string[];
}

/** The sort of a sorted call; `sortBy` null = only `sortOrder` was given (the default key is used). */
export interface SortSpec {
  sortBy: string | null;
  sortOrder: 'asc' | 'desc';
}
