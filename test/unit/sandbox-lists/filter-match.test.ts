import { describe, expect, it } from 'vitest';
import { matchesAll, parseFilters } from '../../../src/sandbox/lists/index.js';
import { type Thing, thing, thingFilters } from './fixtures.js';

/** True when `item` passes the `filters` string. */
const passes = (item: Thing, filters: string) =>
  matchesAll(item, parseFilters(filters, thingFilters), thingFilters);

const named = (name: string | null) => thing({ id: 'x', name });

describe('text operators', () => {
  it('when contains is used, then it matches a substring ignoring case and accents', () => {
    expect(passes(named('Société Générale'), 'name:contains:GENERALE')).toBe(true);
    expect(passes(named('Societe Generale'), `name:contains:${encodeURIComponent('génér')}`)).toBe(true);
    expect(passes(named('Acme'), 'name:contains:zeta')).toBe(false);
  });

  it('when startsWith is used, then it matches a prefix only', () => {
    expect(passes(named('Élan Vital'), 'name:startsWith:elan')).toBe(true);
    expect(passes(named('Vital Élan'), 'name:startsWith:elan')).toBe(false);
  });

  it('when equals or is is used, then the whole text must match after folding', () => {
    expect(passes(named('Crème Brûlée'), `name:equals:${encodeURIComponent('creme brulee')}`)).toBe(true);
    expect(passes(named('Crème Brûlée SA'), `name:equals:${encodeURIComponent('creme brulee')}`)).toBe(false);
    expect(passes(named('ACME'), 'name:is:acme')).toBe(true);
  });

  it('when isNot is used, then it matches a different text and a null one', () => {
    expect(passes(named('Acme'), 'name:isNot:beta')).toBe(true);
    expect(passes(named('Acme'), 'name:isNot:ACME')).toBe(false);
    expect(passes(named(null), 'name:isNot:acme')).toBe(true);
  });

  it('when isAnyOf is used, then one equal value is enough (OR inside a condition)', () => {
    expect(passes(named('Beta'), 'name:isAnyOf:alpha,BETA,gamma')).toBe(true);
    expect(passes(named('Delta'), 'name:isAnyOf:alpha,beta')).toBe(false);
  });

  it('when a value holds % or _, then they are literal characters, not wildcards', () => {
    expect(passes(named('100% sure'), `name:contains:${encodeURIComponent('0%')}`)).toBe(true);
    expect(passes(named('1000 sure'), `name:contains:${encodeURIComponent('0%')}`)).toBe(false);
    expect(passes(named('a_b'), 'name:contains:a_b')).toBe(true);
    expect(passes(named('axb'), 'name:contains:a_b')).toBe(false);
    expect(passes(named('anything'), `name:contains:${encodeURIComponent('%')}`)).toBe(false);
  });

  it('when the value contains an encoded separator, then it matches it literally', () => {
    expect(passes(named('a;b,c:d'), `name:equals:${encodeURIComponent('a;b,c:d')}`)).toBe(true);
  });

  it('when the field is case-sensitive, then case and accents must match exactly', () => {
    const item = thing({ id: 'x', sourceId: 'INV-001' });
    expect(passes(item, 'sourceId:is:INV-001')).toBe(true);
    expect(passes(item, 'sourceId:is:inv-001')).toBe(false);
    expect(passes(item, 'sourceId:contains:inv')).toBe(false);
  });

  it('when the text is null, then contains, equals and isAnyOf do not match', () => {
    expect(passes(named(null), 'name:contains:a')).toBe(false);
    expect(passes(named(null), 'name:equals:a')).toBe(false);
    expect(passes(named(null), 'name:isAnyOf:a,b')).toBe(false);
  });
});

describe('enum operators', () => {
  const closed = thing({ id: 'x', status: 'Closed' });

  it('when is, isNot and isAnyOf are used on an enum, then they compare exact values', () => {
    expect(passes(closed, 'status:is:Closed')).toBe(true);
    expect(passes(closed, 'status:isNot:Closed')).toBe(false);
    expect(passes(closed, 'status:isNot:Open')).toBe(true);
    expect(passes(closed, 'status:isAnyOf:Open,Closed')).toBe(true);
    expect(passes(closed, 'status:isAnyOf:Open,Paused')).toBe(false);
  });
});

describe('boolean operators', () => {
  it('when isTrue or isFalse is used, then they match the value and never null', () => {
    const on = thing({ id: 'a', paused: true });
    const off = thing({ id: 'b', paused: false });
    const unknown = thing({ id: 'c', paused: null });
    expect([on, off, unknown].map((t) => passes(t, 'paused:isTrue'))).toEqual([true, false, false]);
    expect([on, off, unknown].map((t) => passes(t, 'paused:isFalse'))).toEqual([false, true, false]);
  });

  it('when isEmpty is used on a boolean, then only null is empty (false is a value)', () => {
    expect(passes(thing({ id: 'a', paused: null }), 'paused:isEmpty')).toBe(true);
    expect(passes(thing({ id: 'b', paused: false }), 'paused:isEmpty')).toBe(false);
  });
});

describe('date operators', () => {
  const due = (d: string | null) => thing({ id: 'x', due: d });

  it('when on is used, then a datetime anywhere in that day matches', () => {
    expect(passes(due('2024-03-15'), 'due:on:2024-03-15')).toBe(true);
    expect(passes(due('2024-03-15T23:59:59.999Z'), 'due:on:2024-03-15')).toBe(true);
    expect(passes(due('2024-03-16T00:00:00Z'), 'due:on:2024-03-15')).toBe(false);
  });

  it('when before or after is used, then the given day itself is excluded', () => {
    expect(passes(due('2024-03-14T23:00:00Z'), 'due:before:2024-03-15')).toBe(true);
    expect(passes(due('2024-03-15T00:00:00Z'), 'due:before:2024-03-15')).toBe(false);
    expect(passes(due('2024-03-15T23:59:59Z'), 'due:after:2024-03-15')).toBe(false);
    expect(passes(due('2024-03-16'), 'due:after:2024-03-15')).toBe(true);
  });

  it('when between is used, then both bounds are included as whole days', () => {
    const filter = 'due:between:2024-03-01,2024-03-31';
    expect(passes(due('2024-03-01T00:00:00Z'), filter)).toBe(true);
    expect(passes(due('2024-03-31T23:59:59Z'), filter)).toBe(true);
    expect(passes(due('2024-02-29'), filter)).toBe(false);
    expect(passes(due('2024-04-01'), filter)).toBe(false);
  });

  it('when between has the same day twice, then it covers that day', () => {
    expect(passes(due('2024-03-05T12:00:00Z'), 'due:between:2024-03-05,2024-03-05')).toBe(true);
  });

  it('when the date is null, then on, before, after and between do not match but isEmpty does', () => {
    for (const f of ['due:on:2024-01-01', 'due:before:2024-01-01', 'due:after:2024-01-01']) {
      expect(passes(due(null), f)).toBe(false);
    }
    expect(passes(due(null), 'due:between:2000-01-01,2100-01-01')).toBe(false);
    expect(passes(due(null), 'due:isEmpty')).toBe(true);
    expect(passes(due('2024-01-01'), 'due:isNotEmpty')).toBe(true);
  });
});

describe('number operators', () => {
  const amount = (a: string | null) => thing({ id: 'x', amount: a });

  it('when equals is used, then decimals compare exactly whatever their scale', () => {
    expect(passes(amount('10.50'), 'amount:equals:10.5')).toBe(true);
    expect(passes(amount('10.51'), 'amount:equals:10.5')).toBe(false);
  });

  it('when greaterThan or lessThan is used, then the bound itself is excluded', () => {
    expect(passes(amount('100.01'), 'amount:greaterThan:100')).toBe(true);
    expect(passes(amount('100'), 'amount:greaterThan:100')).toBe(false);
    expect(passes(amount('-0.01'), 'amount:lessThan:0')).toBe(true);
    expect(passes(amount('0.00'), 'amount:lessThan:0')).toBe(false);
  });

  it('when decimals would be rounded as floats, then they still compare exactly', () => {
    expect(passes(amount('0.300001'), 'amount:greaterThan:0.3')).toBe(true);
    expect(passes(amount('9007199254740993'), 'amount:greaterThan:9007199254740992')).toBe(true);
  });

  it('when between is used, then both bounds are included', () => {
    expect(passes(amount('1'), 'amount:between:1,2')).toBe(true);
    expect(passes(amount('2.00'), 'amount:between:1,2')).toBe(true);
    expect(passes(amount('2.01'), 'amount:between:1,2')).toBe(false);
  });

  it('when the number is null, then comparisons do not match but isEmpty does', () => {
    expect(passes(amount(null), 'amount:lessThan:1000')).toBe(false);
    expect(passes(amount(null), 'amount:isEmpty')).toBe(true);
  });
});

describe('emptiness', () => {
  it('when a text is the empty string, then isEmpty matches and isNotEmpty does not', () => {
    expect(passes(named(''), 'name:isEmpty')).toBe(true);
    expect(passes(named(''), 'name:isNotEmpty')).toBe(false);
    expect(passes(named(null), 'name:isEmpty')).toBe(true);
    expect(passes(named('x'), 'name:isNotEmpty')).toBe(true);
  });

  it('when a list is empty or null, then isEmpty matches', () => {
    expect(passes(thing({ id: 'a', tags: [] }), 'tags:isEmpty')).toBe(true);
    expect(passes(thing({ id: 'b', tags: null }), 'tags:isEmpty')).toBe(true);
    expect(passes(thing({ id: 'c', tags: ['vip'] }), 'tags:isEmpty')).toBe(false);
    expect(passes(thing({ id: 'c', tags: ['vip'] }), 'tags:isNotEmpty')).toBe(true);
  });
});

describe('list operators', () => {
  const tagged = thing({ id: 'x', tags: ['VIP', 'Région Sud'] });

  it('when containsAny is used, then one shared tag is enough, ignoring case and accents', () => {
    expect(passes(tagged, 'tags:containsAny:vip,other')).toBe(true);
    expect(passes(tagged, `tags:containsAny:${encodeURIComponent('region sud')}`)).toBe(true);
    expect(passes(tagged, 'tags:containsAny:other')).toBe(false);
  });

  it('when containsAll is used, then every tag must be present', () => {
    expect(passes(tagged, `tags:containsAll:vip,${encodeURIComponent('RÉGION SUD')}`)).toBe(true);
    expect(passes(tagged, 'tags:containsAll:vip,other')).toBe(false);
  });

  it('when containsNone is used, then no listed tag may be present', () => {
    expect(passes(tagged, 'tags:containsNone:other,more')).toBe(true);
    expect(passes(tagged, 'tags:containsNone:other,VIP')).toBe(false);
  });

  it('when the list is null, then containsAny and containsAll do not match and containsNone does', () => {
    const none = thing({ id: 'y', tags: null });
    expect(passes(none, 'tags:containsAny:vip')).toBe(false);
    expect(passes(none, 'tags:containsAll:vip')).toBe(false);
    expect(passes(none, 'tags:containsNone:vip')).toBe(true);
  });
});

describe('combining conditions', () => {
  const item = thing({ id: 'x', name: 'Acme', status: 'Open', amount: '50' });

  it('when several conditions are given, then all of them must match (AND)', () => {
    expect(passes(item, 'name:contains:acme;status:is:Open;amount:greaterThan:10')).toBe(true);
    expect(passes(item, 'name:contains:acme;status:is:Closed')).toBe(false);
  });

  it('when there are no conditions, then every item matches', () => {
    expect(passes(item, '')).toBe(true);
  });
});
