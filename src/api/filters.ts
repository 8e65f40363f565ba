import { compareDecimal, isDecimal } from '../domain/decimal.js';
import { FilterError } from './errors.js';
import {
  allowListOf,
  FILTER_ENDPOINTS,
  type FieldOperator,
  type FilterField,
  type FilterFieldSpec,
  type FilterOperator,
  type FilterResource,
  OPERATOR_ARITY,
} from './filter-fields.js';

export * from './filter-fields.js';

/** The spec's limits on `filters`. */
export const FILTER_LIMITS = {
  conditions: 20,
  valuesPerCondition: 50,
  charactersPerValue: 200,
  totalCharacters: 8000,
} as const;

/** A value as given: decimals and dates as strings; integers may be numbers (never a float). */
export type FilterValue = string | number;

type NoValueOperator = 'isTrue' | 'isFalse' | 'isEmpty' | 'isNotEmpty';
type SeveralValuesOperator = 'isAnyOf' | 'containsAny' | 'containsAll' | 'containsNone';

/** The value arguments `where` takes after the operator. */
export type FilterValuesOf<O extends FilterOperator> = O extends NoValueOperator
  ? []
  : O extends SeveralValuesOperator
    ? [values: readonly FilterValue[]]
    : O extends 'between'
      ? [from: FilterValue, to: FilterValue]
      : [value: FilterValue];

export interface FilterCondition {
  field: string;
  operator: FilterOperator;
  values: readonly string[];
}

const DATE_RE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/**
 * Builds the `filters` parameter of one list, checked against that list's allow-list and the
 * spec's limits as each condition is added: a `FilterError` naming the field and the limit is
 * thrown before any request could be sent.
 *
 * @example
 * invoiceFilters().where('sourceId', 'isAnyOf', ['INV-1', 'INV-2']).where('status', 'is', 'Overdue').toString();
 * // 'sourceId:isAnyOf:INV-1,INV-2;status:is:Overdue'
 */
export class FilterBuilder<R extends FilterResource> {
  readonly resource: R;
  readonly #conditions: FilterCondition[] = [];
  #length = 0;

  constructor(resource: R) {
    this.resource = resource;
  }

  where<F extends FilterField<R>, O extends FieldOperator<R, F>>(
    field: F,
    operator: O,
    ...values: FilterValuesOf<O>
  ): this {
    const endpoint = FILTER_ENDPOINTS[this.resource];
    const spec = fieldSpec(endpoint, allowListOf(this.resource), field, operator);
    if (!spec.operators.includes(operator)) {
      throw new FilterError(
        `${endpoint}: field "${field}" does not accept operator "${operator}"; accepted: ${spec.operators.join(', ')}`,
      );
    }
    if (this.#conditions.some((c) => c.field === field)) {
      throw new FilterError(
        `${endpoint}: field "${field}" already has a condition; a field carries one only`,
      );
    }
    if (this.#conditions.length >= FILTER_LIMITS.conditions) {
      throw new FilterError(
        `${endpoint}: condition on "${field}" would be number ${this.#conditions.length + 1}; the limit is ${FILTER_LIMITS.conditions} conditions`,
      );
    }
    const given = operatorValues(operator, values as readonly unknown[]);
    const condition = { field, operator, values: checkValues(endpoint, field, spec, operator, given) };
    const added = encodeCondition(condition).length + (this.#conditions.length > 0 ? 1 : 0);
    if (this.#length + added > FILTER_LIMITS.totalCharacters) {
      throw new FilterError(
        `${endpoint}: filters would be ${this.#length + added} characters with the condition on "${field}"; the limit is ${FILTER_LIMITS.totalCharacters} characters`,
      );
    }
    this.#conditions.push(condition);
    this.#length += added;
    return this;
  }

  get conditions(): readonly FilterCondition[] {
    return this.#conditions;
  }

  get isEmpty(): boolean {
    return this.#conditions.length === 0;
  }

  /** The `filters` text: values percent-encoded; URLSearchParams encodes the whole again on sending. */
  toString(): string {
    return this.#conditions.map(encodeCondition).join(';');
  }
}

export const accountFilters = () => new FilterBuilder('accounts');
export const invoiceFilters = () => new FilterBuilder('invoices');
export const creditNoteFilters = () => new FilterBuilder('creditNotes');
export const communicationFilters = () => new FilterBuilder('communications');
export const accountTaskFilters = () => new FilterBuilder('accountTasks');
/** For lists whose filterable fields the spec does not show: any field, every limit still checked. */
export const openFilters = () => new FilterBuilder('open');

/** `field:operator` or `field:operator:v1,v2`, each value through encodeURIComponent. */
export function encodeCondition(condition: FilterCondition): string {
  const head = `${condition.field}:${condition.operator}`;
  return condition.values.length === 0
    ? head
    : `${head}:${condition.values.map(encodeURIComponent).join(',')}`;
}

/**
 * Splits ids into batches for `field:isAnyOf:...` conditions: at most 50 values each, and short
 * enough that the condition (plus `reservedCharacters` for the other conditions of the same
 * request) stays within 8000 characters. Duplicates are dropped; order is kept.
 *
 * @example
 * for (const batch of anyOfBatches(sourceIds, { field: 'sourceId' }))
 *   invoiceFilters().where('sourceId', 'isAnyOf', batch);
 */
export function anyOfBatches(
  values: readonly string[],
  options: { field: string; operator?: 'isAnyOf' | 'containsAny'; reservedCharacters?: number },
): string[][] {
  const prefix = `${options.field}:${options.operator ?? 'isAnyOf'}:`.length;
  const budget = FILTER_LIMITS.totalCharacters - (options.reservedCharacters ?? 0) - prefix;
  const batches: string[][] = [];
  let batch: string[] = [];
  let length = 0;
  for (const value of new Set(values)) {
    checkValueLength(`${options.field}`, value);
    const encoded = encodeURIComponent(value).length;
    if (encoded > budget) {
      throw new FilterError(
        `filter value for "${options.field}" is ${encoded} characters once encoded; it can never fit`,
      );
    }
    const added = encoded + (batch.length > 0 ? 1 : 0);
    if (batch.length >= FILTER_LIMITS.valuesPerCondition || length + added > budget) {
      batches.push(batch);
      batch = [];
      length = 0;
    }
    length += encoded + (batch.length > 0 ? 1 : 0);
    batch.push(value);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

const FIELD_NAME_RE = /^[A-Za-z][A-Za-z0-9_.]*$/;

/** The field's allow-list entry; for an open list, any well-formed name with any known operator. */
function fieldSpec(
  endpoint: string,
  allowList: Readonly<Record<string, FilterFieldSpec>> | undefined,
  field: string,
  operator: string,
): FilterFieldSpec {
  if (!allowList) {
    if (!FIELD_NAME_RE.test(field)) throw new FilterError(`${endpoint}: "${field}" is not a field name`);
    if (!Object.hasOwn(OPERATOR_ARITY, operator)) {
      throw new FilterError(`${endpoint}: unknown operator "${operator}" on field "${field}"`);
    }
    return { kind: 'text', operators: [operator as FilterOperator] };
  }
  const spec = Object.hasOwn(allowList, field) ? allowList[field] : undefined;
  if (!spec) {
    throw new FilterError(
      `${endpoint}: unknown filter field "${field}"; filterable: ${Object.keys(allowList).join(', ')}`,
    );
  }
  return spec;
}

function operatorValues(operator: FilterOperator, args: readonly unknown[]): unknown[] {
  if (OPERATOR_ARITY[operator] === 'several') {
    const [first] = args;
    return Array.isArray(first) ? [...first] : [...args];
  }
  return [...args];
}

function checkValues(
  endpoint: string,
  field: string,
  spec: FilterFieldSpec,
  operator: FilterOperator,
  given: readonly unknown[],
): string[] {
  const arity = OPERATOR_ARITY[operator];
  const count = given.length;
  const wanted = { none: count === 0, one: count === 1, two: count === 2, several: count >= 1 }[arity];
  if (!wanted) {
    const expected = { none: 'no value', one: 'one value', two: 'two values', several: 'at least one value' }[
      arity
    ];
    throw new FilterError(`${endpoint}: "${field}:${operator}" takes ${expected}, got ${count}`);
  }
  if (count > FILTER_LIMITS.valuesPerCondition) {
    throw new FilterError(
      `${endpoint}: "${field}:${operator}" has ${count} values; the limit is ${FILTER_LIMITS.valuesPerCondition} values per condition (see anyOfBatches)`,
    );
  }
  const values = given.map((value) => valueText(endpoint, field, value));
  for (const value of values) {
    checkValueLength(field, value);
    if (spec.kind === 'date' && !DATE_RE.test(value)) {
      throw new FilterError(`${endpoint}: "${field}" value "${value}" is not a date YYYY-MM-DD`);
    }
    if (spec.kind === 'number' && !isDecimal(value)) {
      throw new FilterError(`${endpoint}: "${field}" value "${value}" is not a decimal number`);
    }
    if (spec.values && !spec.values.includes(value)) {
      throw new FilterError(
        `${endpoint}: "${field}" value "${value}" is not one of ${spec.values.join(', ')}`,
      );
    }
  }
  if (operator === 'between') checkBounds(endpoint, field, spec, values);
  return values;
}

function valueText(endpoint: string, field: string, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  throw new FilterError(
    `${endpoint}: "${field}" value ${String(value)} must be a string (decimals as strings) or an integer`,
  );
}

function checkValueLength(field: string, value: string): void {
  if (value === '') throw new FilterError(`filter value for "${field}" is empty`);
  const length = [...value].length;
  if (length > FILTER_LIMITS.charactersPerValue) {
    throw new FilterError(
      `filter value for "${field}" is ${length} characters; the limit is ${FILTER_LIMITS.charactersPerValue} characters per value`,
    );
  }
}

function checkBounds(
  endpoint: string,
  field: string,
  spec: FilterFieldSpec,
  values: readonly string[],
): void {
  const [from = '', to = ''] = values;
  const reversed = spec.kind === 'number' ? compareDecimal(from, to) > 0 : from > to;
  if (reversed)
    throw new FilterError(`${endpoint}: "${field}:between" bounds are reversed ("${from}" > "${to}")`);
}
