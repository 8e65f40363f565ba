import { describe, expect, it } from 'vitest';
import { parseFilters } from '../../../src/sandbox/lists/index.js';
import { apiErrorOf, thingFilters } from './fixtures.js';

const parse = (raw: string) => parseFilters(raw, thingFilters);

/** Asserts `raw` is refused with 400 LIST_FILTER_INVALID and a message matching `message`. */
function expectInvalid(raw: string, message: RegExp) {
  const err = apiErrorOf(() => parse(raw));
  expect(err.status).toBe(400);
  expect(err.code).toBe('LIST_FILTER_INVALID');
  expect(err.message).toMatch(message);
}

const values = (count: number) => Array.from({ length: count }, (_, i) => `v${i}`).join(',');
/** `count` distinct fields are needed for many conditions; the allow-list is built on the fly. */
const manyFieldsAllow = Object.fromEntries(
  Array.from({ length: 30 }, (_, i) => [
    `f${i}`,
    { kind: 'text' as const, operators: ['isEmpty' as const], value: () => null },
  ]),
);
/** A valid `name:isAnyOf` filter of exactly `length` characters: 50 values of at most 200 characters. */
function filtersOfLength(length: number): string {
  const prefix = 'name:isAnyOf:';
  const room = length - prefix.length - 49;
  const base = Math.floor(room / 50);
  const parts = Array.from({ length: 50 }, (_, i) => 'a'.repeat(base + (i < room % 50 ? 1 : 0)));
  return prefix + parts.join(',');
}
const conditions = (count: number) => Array.from({ length: count }, (_, i) => `f${i}:isEmpty`).join(';');

describe('parseFilters syntax', () => {
  it('when filters is empty, then there are no conditions', () => {
    expect(parse('')).toEqual([]);
  });

  it('when a condition has no value part, then it parses with no values', () => {
    expect(parse('tags:isEmpty')).toEqual([{ field: 'tags', operator: 'isEmpty', values: [] }]);
  });

  it('when conditions are joined by ; and values by commas, then each is parsed in order', () => {
    expect(parse('name:contains:acme;status:isAnyOf:Open,Closed')).toEqual([
      { field: 'name', operator: 'contains', values: ['acme'] },
      { field: 'status', operator: 'isAnyOf', values: ['Open', 'Closed'] },
    ]);
  });

  it('when values percent-encode ; , : space and accents, then they are decoded as literals', () => {
    const raw = `name:isAnyOf:${encodeURIComponent('a;b')},${encodeURIComponent('c,d')},${encodeURIComponent('e:f g')},${encodeURIComponent('Élodie')}`;
    expect(parse(raw)[0]?.values).toEqual(['a;b', 'c,d', 'e:f g', 'Élodie']);
  });

  it('when a value has a malformed percent escape, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('name:contains:%E0%A4%A', /not valid percent-encoding/);
  });

  it('when a value holds an unencoded colon, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('name:contains:a:b', /expected field:operator/);
  });

  it('when a condition is empty (trailing ;), then it is LIST_FILTER_INVALID', () => {
    expectInvalid('tags:isEmpty;', /condition 2/);
  });

  it('when a value is empty, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('name:contains:', /value 1 is empty/);
    expectInvalid('status:isAnyOf:Open,,Closed', /value 2 is empty/);
  });
});

describe('parseFilters allow-list', () => {
  it('when the field is unknown, then it is LIST_FILTER_INVALID naming the field', () => {
    expectInvalid('color:is:red', /unknown field "color"/);
  });

  it('when the field name is an Object prototype key, then it is an unknown field', () => {
    expectInvalid('constructor:is:x', /unknown field "constructor"/);
    expectInvalid('__proto__:is:x', /unknown field "__proto__"/);
  });

  it('when the operator does not exist, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('name:like:acme', /unknown operator "like"/);
  });

  it('when the operator exists but the field does not accept it, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('status:contains:Op', /does not accept operator "contains"/);
  });

  it('when a field is repeated, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('name:contains:a;tags:isEmpty;name:startsWith:b', /already has a condition/);
  });
});

describe('parseFilters value counts', () => {
  it.each([
    ['paused:isTrue:x', 'no value'],
    ['tags:isNotEmpty:x', 'no value'],
    ['name:contains:a,b', 'exactly one value'],
    ['name:equals:a,b', 'exactly one value'],
    ['status:is:Open,Closed', 'exactly one value'],
    ['due:on:2024-01-01,2024-01-02', 'exactly one value'],
    ['amount:greaterThan:1,2', 'exactly one value'],
    ['due:between:2024-01-01', 'exactly two values'],
    ['amount:between:1,2,3', 'exactly two values'],
    ['name:contains', 'exactly one value'],
    ['status:isAnyOf', 'at least one value'],
    ['tags:containsAll', 'at least one value'],
  ])('when the condition is %s, then it is refused as taking %s', (raw, expected) => {
    expectInvalid(raw, new RegExp(`takes ${expected}`));
  });
});

describe('parseFilters typed values', () => {
  it('when a date is not a real YYYY-MM-DD day, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('due:on:2024-02-30', /not a date YYYY-MM-DD/);
    expectInvalid('due:on:2024-1-05', /not a date/);
    expectInvalid('due:before:2024-01-01T00%3A00%3A00Z', /not a date/);
  });

  it('when a leap day is given in a leap year, then it is accepted', () => {
    expect(parse('due:on:2024-02-29')).toHaveLength(1);
  });

  it('when a number is not a decimal, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('amount:greaterThan:1e3', /not a decimal number/);
    expectInvalid('amount:equals:abc', /not a decimal number/);
  });

  it('when an enum value is not one of the enum values, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('status:is:Deleted', /not one of Open, Closed, Paused/);
  });

  it('when between bounds are reversed, then it is LIST_FILTER_INVALID', () => {
    expectInvalid('amount:between:10,9', /bounds are reversed/);
    expectInvalid('due:between:2024-02-01,2024-01-01', /bounds are reversed/);
  });
});

describe('parseFilters limits', () => {
  it('when there are exactly 20 conditions, then they are accepted', () => {
    expect(parseFilters(conditions(20), manyFieldsAllow)).toHaveLength(20);
  });

  it('when there are 21 conditions, then it is refused naming the limit', () => {
    const err = apiErrorOf(() => parseFilters(conditions(21), manyFieldsAllow));
    expect(err.code).toBe('LIST_FILTER_INVALID');
    expect(err.message).toMatch(/21 conditions; the limit is 20 conditions/);
  });

  it('when a condition has exactly 50 values, then it is accepted', () => {
    expect(parse(`name:isAnyOf:${values(50)}`)[0]?.values).toHaveLength(50);
  });

  it('when a condition has 51 values, then it is refused naming the limit', () => {
    expectInvalid(`name:isAnyOf:${values(51)}`, /51 values; the limit is 50 values per condition/);
  });

  it('when a decoded value has exactly 200 characters, then it is accepted', () => {
    expect(parse(`name:contains:${'é'.repeat(200)}`)[0]?.values[0]).toHaveLength(200);
  });

  it('when a decoded value has 201 characters, then it is refused naming the limit', () => {
    expectInvalid(`name:contains:${'a'.repeat(201)}`, /201 characters long; the limit is 200 characters/);
  });

  it('when the limit is counted, then it counts decoded characters, not escapes', () => {
    const encoded = encodeURIComponent('é'.repeat(200));
    expect(encoded.length).toBeGreaterThan(200);
    expect(parse(`name:contains:${encoded}`)).toHaveLength(1);
  });

  it('when filters has exactly 8000 characters, then it is accepted', () => {
    const raw = filtersOfLength(8000);
    expect(raw.length).toBe(8000);
    expect(parse(raw)[0]?.values).toHaveLength(50);
  });

  it('when filters has 8001 characters, then it is refused naming the 8000-character limit', () => {
    expectInvalid(filtersOfLength(8001), /8001 characters long; the limit is 8000 characters/);
  });
});
