import { describe, expect, it } from 'vitest';
import { FilterError } from '../../../src/api/errors.js';
import {
  accountFilters,
  accountTaskFilters,
  anyOfBatches,
  communicationFilters,
  creditNoteFilters,
  FILTER_LIMITS,
  invoiceFilters,
  openFilters,
} from '../../../src/api/filters.js';

/** The builder without its compile-time checks, to show the run-time ones. */
const loose = (builder: object) =>
  builder as { where(field: string, operator: string, ...values: unknown[]): unknown };

const ids = (count: number, prefix = 'INV-') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe('filter builder', () => {
  it('when conditions are added, then they are joined by ; with values joined by ,', () => {
    const text = invoiceFilters()
      .where('sourceId', 'isAnyOf', ['A-1', 'A-2'])
      .where('status', 'is', 'Overdue')
      .where('tags', 'isEmpty')
      .toString();
    expect(text).toBe('sourceId:isAnyOf:A-1,A-2;status:is:Overdue;tags:isEmpty');
  });

  it('when a value holds ; , : spaces or accents, then it is percent-encoded so they stay literal', () => {
    const text = accountFilters().where('accountName', 'contains', 'a;b,c:d é').toString();
    expect(text).toBe('accountName:contains:a%3Bb%2Cc%3Ad%20%C3%A9');
    // URLSearchParams then encodes the whole parameter once more: that is how the API reads it.
    const query = new URLSearchParams({ filters: text }).toString();
    expect(query).toBe('filters=accountName%3Acontains%3Aa%253Bb%252Cc%253Ad%2520%25C3%25A9');
    expect(decodeURIComponent(new URLSearchParams(query).get('filters')!.split(':')[2]!)).toBe('a;b,c:d é');
  });

  it('when numbers and dates are given, then between takes two ordered bounds', () => {
    const text = accountFilters().where('overdueBalance', 'between', '10.50', 200).toString();
    expect(text).toBe('overdueBalance:between:10.50,200');
    expect(invoiceFilters().where('dueDate', 'before', '2026-02-01').toString()).toBe(
      'dueDate:before:2026-02-01',
    );
    expect(() => accountFilters().where('overdueBalance', 'between', '300', '200')).toThrow(/reversed/);
    expect(() => invoiceFilters().where('dueDate', 'between', '2026-03-01', '2026-02-01')).toThrow(
      /reversed/,
    );
  });

  it('when a field is not on the allow-list, then FilterError names it and the accepted fields', () => {
    const bad = () => loose(accountFilters()).where('sourceId', 'is', 'x');
    expect(bad).toThrow(FilterError);
    expect(bad).toThrow(/\/accounts: unknown filter field "sourceId"; filterable: accountName/);
  });

  it('when the field does not accept the operator, then FilterError lists the accepted ones', () => {
    expect(() => loose(invoiceFilters()).where('sourceId', 'contains', 'x')).toThrow(
      /field "sourceId" does not accept operator "contains"; accepted: is, isAnyOf, isEmpty, isNotEmpty/,
    );
    expect(() => loose(accountFilters()).where('accountName', 'isEmpty')).toThrow(/does not accept/);
  });

  it('when a field is repeated, then FilterError', () => {
    const builder = invoiceFilters().where('status', 'is', 'Overdue');
    expect(() => builder.where('status', 'isNot', 'Issued')).toThrow(/already has a condition/);
  });

  it('when the value count does not fit the operator, then FilterError', () => {
    expect(() => invoiceFilters().where('status', 'isAnyOf', [])).toThrow(/takes at least one value, got 0/);
    expect(() => loose(accountFilters()).where('dunningPaused', 'isTrue', 'x')).toThrow(/takes no value/);
    expect(() => loose(accountFilters()).where('daysOverdue', 'between', '1')).toThrow(
      /takes two values, got 1/,
    );
  });

  it('when a condition has more than 50 values, then FilterError points to anyOfBatches', () => {
    invoiceFilters().where('sourceId', 'isAnyOf', ids(FILTER_LIMITS.valuesPerCondition));
    expect(() => invoiceFilters().where('sourceId', 'isAnyOf', ids(51))).toThrow(
      /51 values; the limit is 50 values per condition/,
    );
  });

  it('when a value is longer than 200 characters, then FilterError; 200 is accepted, counted in characters', () => {
    invoiceFilters().where('sourceId', 'is', 'é'.repeat(200));
    expect(() => invoiceFilters().where('sourceId', 'is', 'x'.repeat(201))).toThrow(
      /201 characters; the limit is 200 characters per value/,
    );
  });

  it('when there would be more than 20 conditions, then FilterError', () => {
    const builder = openFilters();
    for (let i = 0; i < FILTER_LIMITS.conditions; i++) builder.where(`field${i}`, 'equals', 'x');
    expect(() => builder.where('field20', 'equals', 'x')).toThrow(/number 21; the limit is 20 conditions/);
  });

  it('when the whole string would pass 8000 characters, then FilterError', () => {
    const builder = openFilters();
    const long = 'é'.repeat(150); // 900 characters once percent-encoded
    for (let i = 0; i < 8; i++) builder.where(`f${i}`, 'isAnyOf', [long]);
    expect(builder.toString().length).toBeLessThanOrEqual(FILTER_LIMITS.totalCharacters);
    expect(() => builder.where('f8', 'isAnyOf', [long])).toThrow(/the limit is 8000 characters/);
  });

  it('when a value is of the wrong kind, then FilterError before anything is sent', () => {
    expect(() => invoiceFilters().where('dueDate', 'on', '01/02/2026')).toThrow(/not a date YYYY-MM-DD/);
    expect(() => accountFilters().where('remainingBalance', 'greaterThan', '1,5')).toThrow(/not a decimal/);
    expect(() => accountFilters().where('remainingBalance', 'greaterThan', 1.5)).toThrow(
      /decimals as strings/,
    );
    expect(() => accountFilters().where('collectionStatus', 'is', 'Closed')).toThrow(
      /not one of Open, Settled, WrittenOff, NoInvoice/,
    );
  });

  it('when each resource is built, then its own allow-list applies', () => {
    expect(creditNoteFilters().where('remainingAmount', 'greaterThan', '0').toString()).toBe(
      'remainingAmount:greaterThan:0',
    );
    expect(communicationFilters().where('direction', 'is', 'Incoming').toString()).toBe(
      'direction:is:Incoming',
    );
    expect(accountTaskFilters().where('createdAt', 'after', '2026-01-01').toString()).toBe(
      'createdAt:after:2026-01-01',
    );
    expect(() => loose(creditNoteFilters()).where('dueDate', 'on', '2026-01-01')).toThrow(
      /\/credit-notes: unknown filter field "dueDate"/,
    );
  });
});

describe('anyOfBatches', () => {
  it('when ids exceed 50, then batches hold at most 50 values, in order, without duplicates', () => {
    const batches = anyOfBatches([...ids(120), 'INV-3'], { field: 'sourceId' });
    expect(batches.map((b) => b.length)).toEqual([50, 50, 20]);
    expect(batches.flat()).toEqual(ids(120));
  });

  it('when long ids would pass 8000 characters, then a batch is closed earlier', () => {
    const long = Array.from({ length: 50 }, (_, i) => `${'é'.repeat(99)}${i}`); // ~595 encoded characters each
    const batches = anyOfBatches(long, { field: 'sourceId', reservedCharacters: 100 });
    expect(batches.length).toBeGreaterThan(1);
    for (const batch of batches) {
      const text = invoiceFilters().where('sourceId', 'isAnyOf', batch).toString();
      expect(text.length).toBeLessThanOrEqual(FILTER_LIMITS.totalCharacters - 100);
    }
    expect(batches.flat()).toEqual(long);
  });

  it('when an id is longer than 200 characters or empty, then FilterError', () => {
    expect(() => anyOfBatches(['x'.repeat(201)], { field: 'sourceId' })).toThrow(FilterError);
    expect(() => anyOfBatches([''], { field: 'sourceId' })).toThrow(/empty/);
    expect(anyOfBatches([], { field: 'sourceId' })).toEqual([]);
  });
});
