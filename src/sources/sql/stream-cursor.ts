import type { CursorKey } from './keyset-query.js';

/**
 * The state a SQL stream keeps between passes (opaque to the engine, in the spirit of Singer): the
 * greatest `(ts, id)` read, as the database printed them, under the names of the cursor columns.
 *
 * @example { "kind": "keyset", "columns": ["updated_at", "id"], "values": ["2026-01-15 09:30:00.123456+00", "42"] }
 * @example { "kind": "keyset", "columns": ["tms", "rowid"], "values": ["2026-01-15 09:30:00+00:00", "42"] } (a MySQL TIMESTAMP)
 */
export type KeysetCursorState = {
  kind: 'keyset';
  columns: [string, string];
  values: [string, string];
};

export const keysetState = (columns: readonly [string, string], key: CursorKey): KeysetCursorState => ({
  kind: 'keyset',
  columns: [columns[0], columns[1]],
  values: [key[0], key[1]],
});

export type StoredKey =
  | { kind: 'none' }
  | { kind: 'key'; key: CursorKey }
  /** The cursor was written for other cursor columns (the configuration changed): not usable. */
  | { kind: 'other-columns'; columns: string[] };

/** Reads a stored cursor back; anything that is not a keyset cursor of these columns is unusable. */
export function storedKey(
  state: Record<string, unknown> | null,
  columns: readonly [string, string],
): StoredKey {
  if (state === null) return { kind: 'none' };
  const { kind, columns: storedColumns, values } = state as Partial<KeysetCursorState>;
  const isPair = (v: unknown): v is [string, string] =>
    Array.isArray(v) && v.length === 2 && v.every((x) => typeof x === 'string');
  if (kind !== 'keyset' || !isPair(storedColumns) || !isPair(values)) {
    return { kind: 'other-columns', columns: isPair(storedColumns) ? storedColumns : [] };
  }
  if (storedColumns[0] !== columns[0] || storedColumns[1] !== columns[1]) {
    return { kind: 'other-columns', columns: storedColumns };
  }
  return { kind: 'key', key: values };
}
