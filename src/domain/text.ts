/**
 * Text the state DB can store. Postgres refuses a NUL character in `text` and `jsonb` (and a JSON
 * `\u0000` escape), and a lone UTF-16 surrogate cannot be encoded as UTF-8: a record holding one
 * would reach the API, then fail to be recorded. Such a value is refused as the row's data, before
 * any API call.
 */
const UNSTORABLE_SOURCE = String.raw`\x00|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]`;
const UNSTORABLE = new RegExp(UNSTORABLE_SOURCE);
const UNSTORABLE_ALL = new RegExp(UNSTORABLE_SOURCE, 'g');

export function isStorableText(text: string): boolean {
  return !UNSTORABLE.test(text);
}

/** The text with each unstorable character replaced by U+FFFD, to be stored in a report or a failure. */
export function storableText(text: string): string {
  return isStorableText(text) ? text : text.replace(UNSTORABLE_ALL, '\uFFFD');
}

/**
 * The path of the first string field the state DB cannot store (`fullName`, `billingAddress.city`,
 * `tags.1`), or null when every string is storable.
 */
export function unstorableFieldOf(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return isStorableText(value) ? null : path;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, inner] of Object.entries(value)) {
    const found = unstorableFieldOf(inner, path ? `${path}.${key}` : key);
    if (found !== null) return found;
  }
  return null;
}

/** A copy of a JSON-like value with every string made storable (see `storableText`). */
export function storableCopy<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => storableCopy(item)) as T;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableText(k), storableCopy(v)])) as T;
}
