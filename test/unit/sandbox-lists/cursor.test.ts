import { describe, expect, it } from 'vitest';
import {
  conditionsFingerprintInput,
  decodeCursor,
  encodeHistoricalCursor,
  encodeV2Cursor,
  listFingerprint,
  parseFilters,
} from '../../../src/sandbox/lists/index.js';
import { apiErrorOf, thingFilters } from './fixtures.js';

const conditions = (raw: string) => parseFilters(raw, thingFilters);
const fingerprint = (raw: string, endpoint = '/things') => listFingerprint(endpoint, conditions(raw), null);

describe('fingerprints', () => {
  it('when conditions are reordered, then the fingerprint is the same', () => {
    expect(fingerprint('name:contains:a;status:is:Open;tags:isEmpty')).toBe(
      fingerprint('tags:isEmpty;status:is:Open;name:contains:a'),
    );
  });

  it('when values inside one condition are reordered, then the fingerprint is the same', () => {
    expect(fingerprint('status:isAnyOf:Open,Closed,Paused')).toBe(
      fingerprint('status:isAnyOf:Paused,Open,Closed'),
    );
    expect(conditionsFingerprintInput(conditions('tags:containsAll:b,a;name:is:x'))).toBe(
      conditionsFingerprintInput(conditions('name:is:x;tags:containsAll:a,b')),
    );
  });

  it('when a value, an operator or a field differs, then the fingerprint differs', () => {
    const base = fingerprint('name:contains:a');
    expect(fingerprint('name:contains:b')).not.toBe(base);
    expect(fingerprint('name:startsWith:a')).not.toBe(base);
    expect(fingerprint('sourceId:contains:a')).not.toBe(base);
    expect(fingerprint('')).not.toBe(base);
  });

  it('when the endpoint differs, then the fingerprint differs', () => {
    expect(fingerprint('name:contains:a', '/other')).not.toBe(fingerprint('name:contains:a'));
  });

  it('when the sort or its order differs, then the fingerprint differs', () => {
    const asc = listFingerprint('/things', [], { sortBy: 'name', sortOrder: 'asc' });
    expect(listFingerprint('/things', [], { sortBy: 'name', sortOrder: 'desc' })).not.toBe(asc);
    expect(listFingerprint('/things', [], { sortBy: 'amount', sortOrder: 'asc' })).not.toBe(asc);
    expect(listFingerprint('/things', [], null)).not.toBe(asc);
  });

  it('when a fingerprint is made, then it is 16 lowercase hex characters', () => {
    expect(fingerprint('name:contains:a')).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('cursor formats', () => {
  it('when a v2 cursor is encoded, then it has the form v2:<fingerprint>:<offset> and decodes back', () => {
    const cursor = encodeV2Cursor('0123456789abcdef', 40);
    expect(cursor).toBe('v2:0123456789abcdef:40');
    expect(decodeCursor(cursor)).toEqual({ format: 'v2', fingerprint: '0123456789abcdef', offset: 40 });
  });

  it('when a historical cursor is encoded, then it is opaque, not v2, and decodes back', () => {
    const cursor = encodeHistoricalCursor('/accounts', 7);
    expect(cursor.startsWith('v2:')).toBe(false);
    expect(cursor).not.toContain('/accounts');
    expect(decodeCursor(cursor)).toEqual({ format: 'historical', endpoint: '/accounts', offset: 7 });
  });

  it.each([
    ['', 'empty'],
    ['v2:xyz:1', 'bad fingerprint'],
    ['v2:0123456789abcdef:-1', 'negative offset'],
    ['v2:0123456789abcdef:01', 'leading zero'],
    ['v2:0123456789abcdef:99999999999999999999', 'unsafe integer'],
    ['v3:0123456789abcdef:1', 'unknown version'],
    ['not a cursor!', 'not base64url'],
    [Buffer.from('accounts|1').toString('base64url'), 'historical without a path'],
    [Buffer.from('/accounts|x').toString('base64url'), 'historical with a bad offset'],
  ])('when the cursor is malformed (%s: %s), then it is 400 LIST_CURSOR_INVALID', (raw) => {
    const err = apiErrorOf(() => decodeCursor(raw));
    expect(err.status).toBe(400);
    expect(err.code).toBe('LIST_CURSOR_INVALID');
  });
});
