/**
 * The per-resource allow-lists of the `filters` parameter. `/accounts` is exactly the spec's
 * table. For the other lists the spec names only the fields, so their operators follow the field's
 * kind (`OPERATORS_BY_KIND`; a text field that cannot be null takes no isEmpty/isNotEmpty), the same
 * defaults the sandbox implements; `sourceId` has the spec's own four operators. Lists whose fields
 * the spec does not name at all take an `open` builder: any field, every limit still checked.
 */

export type FilterOperator =
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

/** How a field's values are written: dates `YYYY-MM-DD`, numbers as decimal strings. */
export type FieldKind = 'text' | 'enum' | 'boolean' | 'date' | 'number' | 'list';

export interface FilterFieldSpec {
  kind: FieldKind;
  operators: readonly FilterOperator[];
  /** For enumerations the spec lists completely: any other value is refused before sending. */
  values?: readonly string[];
}

/** How many values an operator takes (the spec's operator table). */
export const OPERATOR_ARITY: Readonly<Record<FilterOperator, 'none' | 'one' | 'two' | 'several'>> = {
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

export const OPERATORS_BY_KIND = {
  text: ['contains', 'startsWith', 'equals', 'isEmpty', 'isNotEmpty'],
  enum: ['is', 'isNot', 'isAnyOf'],
  boolean: ['isTrue', 'isFalse'],
  date: ['on', 'before', 'after', 'between'],
  number: ['equals', 'greaterThan', 'lessThan', 'between'],
  list: ['containsAny', 'containsAll', 'containsNone', 'isEmpty', 'isNotEmpty'],
} as const satisfies Record<FieldKind, readonly FilterOperator[]>;

/** A text that is never null (a name, a number): comparison operators only. */
const name = { kind: 'text', operators: ['contains', 'startsWith', 'equals'] } as const;
const text = { kind: 'text', operators: OPERATORS_BY_KIND.text } as const;
/** A document number: text compared, or looked up exactly (`is`, `isAnyOf`). */
const documentNumber = {
  kind: 'text',
  operators: ['contains', 'startsWith', 'equals', 'is', 'isAnyOf', 'isEmpty', 'isNotEmpty'],
} as const;
const enumeration = { kind: 'enum', operators: OPERATORS_BY_KIND.enum } as const;
const nullableEnum = {
  kind: 'enum',
  operators: [...OPERATORS_BY_KIND.enum, 'isEmpty', 'isNotEmpty'],
} as const;
const boolean = { kind: 'boolean', operators: OPERATORS_BY_KIND.boolean } as const;
const date = { kind: 'date', operators: OPERATORS_BY_KIND.date } as const;
const number = { kind: 'number', operators: OPERATORS_BY_KIND.number } as const;
const list = { kind: 'list', operators: OPERATORS_BY_KIND.list } as const;
/** The caller's document id: case-sensitive, and only these four operators (spec). */
const sourceId = { kind: 'text', operators: ['is', 'isAnyOf', 'isEmpty', 'isNotEmpty'] } as const;

export const COLLECTION_STATUSES = ['Open', 'Settled', 'WrittenOff', 'NoInvoice'] as const;
export const COLLECTIVE_PROCEEDINGS = ['Yes', 'No', 'Unknown'] as const;

export const FILTER_FIELDS = {
  accounts: {
    accountName: name,
    tags: list,
    dunningPaused: boolean,
    collectionStatus: { ...enumeration, values: COLLECTION_STATUSES },
    daysOverdue: number,
    overdueInvoiceCount: number,
    overdueBalance: number,
    remainingBalance: number,
    hasPaymentSchedule: boolean,
    paymentMethod: nullableEnum,
    collectiveProceeding: { ...enumeration, values: COLLECTIVE_PROCEEDINGS },
    source: nullableEnum,
  },
  invoices: {
    number: documentNumber,
    accountName: name,
    tags: list,
    status: enumeration,
    dueDate: date,
    paymentSchedule: boolean,
    paymentMethod: nullableEnum,
    totalAmount: number,
    remainingBalance: number,
    channel: enumeration,
    sourceId,
  },
  creditNotes: {
    number: documentNumber,
    accountName: name,
    tags: list,
    status: enumeration,
    issuedDate: date,
    paymentMethod: nullableEnum,
    totalAmount: number,
    remainingAmount: number,
    channel: enumeration,
    sourceId,
  },
  communications: {
    direction: enumeration,
    status: enumeration,
    deliveryStatus: nullableEnum,
    accountName: name,
    contactName: text,
    subject: text,
    date,
  },
  accountTasks: {
    title: name,
    accountName: name,
    status: enumeration,
    type: enumeration,
    tags: list,
    balance: number,
    createdAt: date,
    updatedAt: date,
  },
} as const satisfies Record<string, Record<string, FilterFieldSpec>>;

type KnownResource = keyof typeof FILTER_FIELDS;
/** A list with a known allow-list, or `open` for lists whose filterable fields are not shown. */
export type FilterResource = KnownResource | 'open';
export type FilterField<R extends FilterResource> = R extends KnownResource
  ? keyof (typeof FILTER_FIELDS)[R] & string
  : string;
export type FieldOperator<R extends FilterResource, F extends string> = R extends KnownResource
  ? F extends keyof (typeof FILTER_FIELDS)[R]
    ? ((typeof FILTER_FIELDS)[R][F] extends { operators: readonly (infer O)[] } ? O : never) & FilterOperator
    : never
  : FilterOperator;

/** The endpoint each allow-list belongs to, for error messages. */
export const FILTER_ENDPOINTS: Readonly<Record<FilterResource, string>> = {
  accounts: '/accounts',
  invoices: '/invoices',
  creditNotes: '/credit-notes',
  communications: '/communications',
  accountTasks: '/account-tasks/search',
  open: 'list',
};

/** The allow-list of a resource; undefined for `open` lists. */
export function allowListOf(resource: FilterResource): Readonly<Record<string, FilterFieldSpec>> | undefined {
  return resource === 'open' ? undefined : FILTER_FIELDS[resource];
}
