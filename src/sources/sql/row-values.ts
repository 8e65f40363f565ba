/** Values of a SQL row that only SQL has: its timestamps as Postgres prints them, tombstone flags. */

const PG_TIMESTAMP_RE =
  /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * Postgres prints a `timestamptz` as `2026-01-15 09:30:00.123456+00` (ISO DateStyle, UTC session):
 * this gives `2026-01-15T09:30:00.123Z`, what the API's `lastUpdate` and the validators expect.
 * A `timestamp` without time zone is taken as UTC. Anything else is returned as is (the validator
 * then says what is wrong with it).
 */
export function isoTimestamp(text: string): string {
  const m = PG_TIMESTAMP_RE.exec(text);
  if (!m) return text;
  const [, date, hm, seconds, fraction, zone] = m;
  let offset = zone ?? 'Z';
  if (offset !== 'Z') {
    const digits = offset.slice(1).replace(':', '');
    offset = `${offset[0]}${digits.slice(0, 2)}:${digits.slice(2, 4).padEnd(2, '0')}`;
  }
  const ms = (fraction ?? '').slice(0, 3).padEnd(3, '0');
  const parsed = new Date(`${date}T${hm}${seconds ?? ':00'}.${ms}${offset}`);
  return Number.isNaN(parsed.getTime()) ? text : parsed.toISOString();
}

/** A tombstone flag: true, `t`, `true`, `1`, `yes`, `y` (any case); anything else is "not deleted". */
export function isTruthyFlag(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value === 'number') return value === 1;
  if (typeof value !== 'string') return false;
  return ['t', 'true', '1', 'yes', 'y'].includes(value.trim().toLowerCase());
}
