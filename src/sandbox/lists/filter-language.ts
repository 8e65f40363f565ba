/**
 * The `filters` language of the Public API lists:
 * `field:operator` or `field:operator:v1,v2`, conditions joined by `;`, values percent-encoded.
 * Parsing validates everything up front so that nothing is ignored silently.
 */

import { compareDecimal, isDecimal } from '../../domain/decimal.js';
import { ApiError } from '../errors.js';
import { characterCount, compareStrings, isCalendarDate } from './filter-values.js';
import type { Condition, FilterAllowList, FilterField, Operator } from './types.js';

export { matchesAll } from './filter-match.js';

export const MAX_FILTERS_LENGTH = 8000;
export const MAX_CONDITIONS = 20;
export const MAX_VALUES_PER_CONDITION = 50;
export const MAX_VALUE_LENGTH = 200;

/** How many values each operator takes; also the list of known operators. */
type Arity = 'none' | 'one' | 'two' | 'several';
const ARITY: Readonly<Record<Operator, Arity>> = {
  contains: 'one',
  startsWith: 'one',
  equals: 'one',
  is: 'one',
  isNot: 'one',
  isAnyOf: 'several',
  isTrue: 'none',
  isFalse: 'none',
  on: 'one',
  before: 'one',
  after: 'one',
  between: 'two',
  greaterThan: 'one',
  lessThan: 'one',
  isEmpty: 'none',
  isNotEmpty: 'none',
  containsAny: 'several',
  containsAll: 'several',
  containsNone: 'several',
};

const ARITY_TEXT: Readonly<Record<Arity, string>> = {
  none: 'no value',
  one: 'exactly one value',
  two: 'exactly two values',
  several: 'at least one value',
};

/** The one error every filter problem yields. */
export const filterInvalid = (message: string): ApiError => new ApiError(400, 'LIST_FILTER_INVALID', message);

/** Parses and validates a `filters` string against a resource's allow-list; `''` = no conditions. */
export function parseFilters<T>(raw: string, allow: FilterAllowList<T>): Condition[] {
  if (raw.length > MAX_FILTERS_LENGTH) {
    throw filterInvalid(
      `filters is ${raw.length} characters long; the limit is ${MAX_FILTERS_LENGTH} characters`,
    );
  }
  if (raw === '') return [];
  const segments = raw.split(';');
  if (segments.length > MAX_CONDITIONS) {
    throw filterInvalid(
      `filters has ${segments.length} conditions; the limit is ${MAX_CONDITIONS} conditions`,
    );
  }
  const seen = new Set<string>();
  return segments.map((segment, index) => {
    const condition = parseCondition(segment, conditionLabel(segment, index), allow);
    if (seen.has(condition.field)) {
      throw filterInvalid(
        `${conditionLabel(segment, index)}: field "${condition.field}" already has a condition; a field carries one condition only`,
      );
    }
    seen.add(condition.field);
    return condition;
  });
}

/** Names a condition in messages, shortened so an 8000-character input cannot flood the error. */
function conditionLabel(segment: string, index: number): string {
  const shown = segment.length > 60 ? `${segment.slice(0, 57)}...` : segment;
  return `filter condition ${index + 1} ("${shown}")`;
}

function parseCondition<T>(segment: string, label: string, allow: FilterAllowList<T>): Condition {
  const parts = segment.split(':');
  // More than three parts means an unencoded ':' in a value: refused rather than guessed.
  if (parts.length < 2 || parts.length > 3) {
    throw filterInvalid(
      `${label}: expected field:operator or field:operator:value,value (percent-encode ':' ';' ',' inside values)`,
    );
  }
  const [fieldName = '', operatorName = '', rawValues] = parts;
  const field = lookupField(allow, fieldName, label);
  const operator = lookupOperator(field, fieldName, operatorName, label);
  const values = rawValues === undefined ? [] : decodeValues(rawValues, label);
  checkArity(operator, values.length, label);
  for (const value of values) checkValue(field, value, label);
  if (operator === 'between') checkBounds(field, values, label);
  return { field: fieldName, operator, values };
}

function lookupField<T>(allow: FilterAllowList<T>, name: string, label: string): FilterField<T> {
  // hasOwn keeps names such as `constructor` or `__proto__` from reaching the prototype.
  const field = Object.hasOwn(allow, name) ? allow[name] : undefined;
  if (!field) {
    const known = Object.keys(allow).join(', ') || 'none';
    throw filterInvalid(`${label}: unknown field "${name}"; filterable fields: ${known}`);
  }
  return field;
}

function lookupOperator<T>(field: FilterField<T>, fieldName: string, name: string, label: string): Operator {
  if (!Object.hasOwn(ARITY, name)) throw filterInvalid(`${label}: unknown operator "${name}"`);
  const operator = name as Operator;
  if (!field.operators.includes(operator)) {
    throw filterInvalid(
      `${label}: field "${fieldName}" does not accept operator "${name}"; accepted: ${field.operators.join(', ')}`,
    );
  }
  return operator;
}

/** Splits on the separators first, then decodes, so encoded `;` `,` `:` stay literal. */
function decodeValues(rawValues: string, label: string): string[] {
  const parts = rawValues.split(',');
  if (parts.length > MAX_VALUES_PER_CONDITION) {
    throw filterInvalid(
      `${label}: ${parts.length} values; the limit is ${MAX_VALUES_PER_CONDITION} values per condition`,
    );
  }
  return parts.map((part, index) => decodeValue(part, index, label));
}

function decodeValue(part: string, index: number, label: string): string {
  let value: string;
  try {
    value = decodeURIComponent(part);
  } catch {
    throw filterInvalid(`${label}: value ${index + 1} is not valid percent-encoding`);
  }
  if (value === '') throw filterInvalid(`${label}: value ${index + 1} is empty`);
  const length = characterCount(value);
  if (length > MAX_VALUE_LENGTH) {
    throw filterInvalid(
      `${label}: value ${index + 1} is ${length} characters long; the limit is ${MAX_VALUE_LENGTH} characters per value`,
    );
  }
  return value;
}

function checkArity(operator: Operator, count: number, label: string): void {
  const arity = ARITY[operator];
  const ok =
    arity === 'none'
      ? count === 0
      : arity === 'one'
        ? count === 1
        : arity === 'two'
          ? count === 2
          : count >= 1;
  if (!ok) {
    throw filterInvalid(`${label}: operator "${operator}" takes ${ARITY_TEXT[arity]}, got ${count}`);
  }
}

/** Refuses values the field's kind cannot compare with, instead of matching nothing. */
function checkValue<T>(field: FilterField<T>, value: string, label: string): void {
  if (field.kind === 'date' && !isCalendarDate(value)) {
    throw filterInvalid(`${label}: "${value}" is not a date YYYY-MM-DD`);
  }
  if (field.kind === 'number' && !isDecimal(value)) {
    throw filterInvalid(`${label}: "${value}" is not a decimal number`);
  }
  if (field.kind === 'enum' && field.enumValues && !field.enumValues.includes(value)) {
    throw filterInvalid(`${label}: "${value}" is not one of ${field.enumValues.join(', ')}`);
  }
}

/** A `between` whose lower bound is above its upper bound is a client mistake, not an empty range. */
function checkBounds<T>(field: FilterField<T>, values: readonly string[], label: string): void {
  const [lower = '', upper = ''] = values;
  const order = field.kind === 'number' ? compareDecimal(lower, upper) : compareStrings(lower, upper);
  if (order > 0) throw filterInvalid(`${label}: between bounds are reversed ("${lower}" > "${upper}")`);
}

/**
 * The canonical text of a set of conditions, hashed into cursor fingerprints:
 * conditions sorted by field (a field appears once) and values sorted, except `between`
 * whose two values are ordered bounds.
 */
export function conditionsFingerprintInput(conditions: readonly Condition[]): string {
  const canonical = conditions
    .map(
      (c) => [c.field, c.operator, c.operator === 'between' ? [...c.values] : [...c.values].sort()] as const,
    )
    .sort((a, b) => compareStrings(a[0], b[0]));
  return JSON.stringify(canonical);
}
