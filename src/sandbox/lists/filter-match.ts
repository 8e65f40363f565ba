/**
 * The semantics of parsed filter conditions: AND across conditions, OR across values.
 * Conditions come from `parseFilters`, so values are already validated for the field's kind.
 */

import { compareByKind, textKey } from './filter-values.js';
import type { Condition, FieldValue, FilterAllowList, FilterField, Operator } from './types.js';

/** True when the item satisfies every condition. */
export function matchesAll<T>(item: T, conditions: readonly Condition[], allow: FilterAllowList<T>): boolean {
  return conditions.every((condition) => matchesOne(item, condition, fieldOf(allow, condition.field)));
}

function fieldOf<T>(allow: FilterAllowList<T>, name: string): FilterField<T> {
  const field = Object.hasOwn(allow, name) ? allow[name] : undefined;
  // Conditions parsed against another allow-list are a programming error, not a client one.
  if (!field) throw new Error(`filter condition on "${name}" does not belong to this allow-list`);
  return field;
}

function matchesOne<T>(item: T, condition: Condition, field: FilterField<T>): boolean {
  const value = field.value(item);
  switch (condition.operator) {
    case 'isEmpty':
      return isEmptyValue(value);
    case 'isNotEmpty':
      return !isEmptyValue(value);
    case 'isTrue':
      return value === true; // null never matches
    case 'isFalse':
      return value === false; // null never matches
    case 'containsAny':
    case 'containsAll':
    case 'containsNone':
      return matchesList(condition, listOf(value, condition.field), field);
    default:
      return matchesScalar(condition, scalarOf(value, condition.field), field);
  }
}

/** Null, an empty string and an empty list count as empty; `false` is a value. */
function isEmptyValue(value: FieldValue): boolean {
  return value === null || value === '' || (Array.isArray(value) && value.length === 0);
}

function listOf(value: FieldValue, fieldName: string): readonly string[] | null {
  if (value === null || Array.isArray(value)) return value;
  throw new TypeError(`filter field "${fieldName}" is used as a list but produced ${typeof value}`);
}

function scalarOf(value: FieldValue, fieldName: string): string | null {
  if (value === null || typeof value === 'string') return value;
  throw new TypeError(`filter field "${fieldName}" is compared as a value but produced a ${typeof value}`);
}

/**
 * List fields (tags): values compare like text of the field. A null list holds nothing,
 * so only `containsNone` matches it, consistently with `isNot` on a null value.
 */
function matchesList<T>(
  condition: Condition,
  list: readonly string[] | null,
  field: FilterField<T>,
): boolean {
  const held = new Set((list ?? []).map((entry) => textKey(field, entry)));
  const wanted = condition.values.map((v) => textKey(field, v));
  if (condition.operator === 'containsNone') return !wanted.some((v) => held.has(v));
  if (list === null) return false;
  return condition.operator === 'containsAll'
    ? wanted.every((v) => held.has(v))
    : wanted.some((v) => held.has(v));
}

/**
 * Single-value operators. A null value matches only `isNot` (a missing value is "not X");
 * every other comparison with null is false.
 */
function matchesScalar<T>(condition: Condition, value: string | null, field: FilterField<T>): boolean {
  const { operator, values, field: name } = condition;
  if (value === null) return operator === 'isNot';
  const compare = (filterValue: string) => compareByKind(field, name, value, filterValue);
  const test = SCALAR_TESTS[operator] ?? unsupported(operator, name);
  return test({ compare, value, values, text: (text) => textKey(field, text) });
}

/** What a single-value operator needs: the comparison by kind and the folded text of the field. */
interface ScalarInput {
  compare: (filterValue: string) => number;
  value: string;
  values: readonly string[];
  text: (text: string) => string;
}

const firstOf = (values: readonly string[]): string => values[0] ?? '';
const secondOf = (values: readonly string[]): string => values[1] ?? '';

/** `%` and `_` are literal: contains/startsWith are plain substring tests, never LIKE patterns. */
const SCALAR_TESTS: Partial<Record<Operator, (input: ScalarInput) => boolean>> = {
  contains: ({ value, values, text }) => text(value).includes(text(firstOf(values))),
  startsWith: ({ value, values, text }) => text(value).startsWith(text(firstOf(values))),
  equals: ({ compare, values }) => compare(firstOf(values)) === 0,
  is: ({ compare, values }) => compare(firstOf(values)) === 0,
  on: ({ compare, values }) => compare(firstOf(values)) === 0,
  isNot: ({ compare, values }) => compare(firstOf(values)) !== 0,
  isAnyOf: ({ compare, values }) => values.some((v) => compare(v) === 0),
  before: ({ compare, values }) => compare(firstOf(values)) < 0,
  lessThan: ({ compare, values }) => compare(firstOf(values)) < 0,
  after: ({ compare, values }) => compare(firstOf(values)) > 0,
  greaterThan: ({ compare, values }) => compare(firstOf(values)) > 0,
  between: ({ compare, values }) => compare(firstOf(values)) >= 0 && compare(secondOf(values)) <= 0,
};

function unsupported(operator: Operator, fieldName: string): never {
  throw new Error(`operator "${operator}" on field "${fieldName}" has no scalar semantics`);
}
