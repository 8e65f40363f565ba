import type { AccountRecord } from '../domain/records.js';
import { checkTimestamp } from './field-validators.js';

/** The account tombstone of a row whose other columns may be empty or invalid: only the key counts. */
export function minimalTombstone(sourceId: string, get: (column: string) => string): AccountRecord {
  const updatedAt = get('updatedAt');
  return {
    kind: 'account',
    sourceId,
    fullName: get('fullName'),
    currencyCode: get('currencyCode'),
    billingAddress: { street: null, city: null, postalCode: null, country: null },
    tags: [],
    updatedAt: updatedAt !== '' && checkTimestamp(updatedAt).ok ? updatedAt : null,
    deleted: true,
  };
}
