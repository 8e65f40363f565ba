import { describe, expect, it } from 'vitest';
import {
  internalKey,
  NAME_BYTES_KEPT,
  numberedName,
  storedName,
} from '../../../src/sources/csv/drop-names.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('the names the source makes from a dropped name', () => {
  it('when a name is short, then its key and stored name are the name itself', () => {
    expect(internalKey('invoices.csv')).toBe('invoices.csv');
    expect(storedName('invoices.csv')).toBe('invoices.csv');
  });

  it('when a name is 253 bytes, then its key is a hash and its stored name keeps its start and extension within the limit', () => {
    const name = `invoices-${'x'.repeat(240)}.csv`;
    expect(internalKey(name)).toMatch(/^~[0-9a-f]{32}$/);
    const stored = storedName(name);
    expect(bytes(stored)).toBeLessThanOrEqual(NAME_BYTES_KEPT);
    expect(stored).toMatch(/^invoices-x+~[0-9a-f]{12}\.csv$/);
    // A numbered copy and its report still fit a file name.
    expect(bytes(`${numberedName(stored, 9999)}.errors.csv`)).toBeLessThanOrEqual(255);
  });

  it('when two long names differ only at their end, then their keys and stored names differ', () => {
    const a = `invoices-${'x'.repeat(230)}-a.csv`;
    const b = `invoices-${'x'.repeat(230)}-b.csv`;
    expect(internalKey(a)).not.toBe(internalKey(b));
    expect(storedName(a)).not.toBe(storedName(b));
  });

  it('when a long name is made of multi-byte characters, then its stored name cuts none in two', () => {
    const name = `invoices-${'é€'.repeat(60)}.csv`;
    const stored = storedName(name);
    expect(bytes(stored)).toBeLessThanOrEqual(NAME_BYTES_KEPT);
    expect(stored).not.toContain('\uFFFD');
    expect(Buffer.from(stored, 'utf8').toString('utf8')).toBe(stored);
    expect(stored.startsWith('invoices-é€')).toBe(true);
  });
});
