import { createHash, hash } from 'node:crypto';

/** sha256 of a canonical JSON form: the same values give the same hash whatever the key order. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record)
      .filter((k) => record[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * The fingerprint a record map row keeps of a record: sha256 (base64url) of a JSON array of the
 * values that decide "changed", in a fixed order, starting with the record's kind and key.
 *
 * A fixed-order array needs no key sorting (the canonical form above costs several times more, and
 * this runs for every record of every pass), and the key inside makes a fingerprint name one record:
 * the state DB can then tell a whole batch's unchanged records by their fingerprints alone. Parts are
 * scalars or arrays of scalars, never objects, whose key order would count.
 */
export function fingerprint(parts: readonly unknown[]): string {
  return hash('sha256', JSON.stringify(parts), 'base64url');
}
