/** Values of a SQL row that only SQL has: its timestamps as the database prints them, tombstone flags. */

const SQL_TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?(?:\.(\d+))?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * A timestamp as the database printed it (`2026-01-15 09:30:00.123456+00` from Postgres, a MySQL
 * TIMESTAMP's `2026-01-15 09:30:00+00:00`) as `2026-01-15T09:30:00.123Z`, what the API's `lastUpdate`
 * and the validators expect. A zone-less one (Postgres `timestamp`, MySQL `DATETIME`) is a wall-clock
 * time in `timeZone` (the source's setting, default UTC). Anything else is returned as is (the
 * validator then says what is wrong with it).
 */
export function isoTimestamp(text: string, timeZone = 'UTC'): string {
  const m = SQL_TIMESTAMP_RE.exec(text);
  if (!m) return text;
  const [, year, month, day, hour, minute, second, fraction, zone] = m;
  const ms = Number((fraction ?? '').slice(0, 3).padEnd(3, '0'));
  const wall = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute));
  const wallMs = wall + Number(second ?? 0) * 1000 + ms;
  // Date.UTC takes years 0-99 as 1900-1999, and rolls an impossible date over: both are refused.
  const back = new Date(wall);
  if (back.getUTCFullYear() !== Number(year) || back.getUTCDate() !== Number(day)) return text;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59) return text;
  let utc: number;
  if (zone === undefined) utc = timeZone === 'UTC' ? wallMs : wallTimeToUtc(wallMs, timeZone);
  else if (zone === 'Z') utc = wallMs;
  else {
    const digits = zone.slice(1).replace(':', '');
    const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4).padEnd(2, '0'));
    utc = wallMs - (zone[0] === '-' ? -minutes : minutes) * 60_000;
  }
  return new Date(utc).toISOString();
}

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** How far `timeZone`'s wall clock is ahead of UTC at the instant `utcMs`, in milliseconds. */
function offsetAt(utcMs: number, timeZone: string): number {
  let format = offsetFormats.get(timeZone);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    offsetFormats.set(timeZone, format);
  }
  const part: Record<string, number> = {};
  for (const p of format.formatToParts(new Date(utcMs))) part[p.type] = Number(p.value);
  const shown = Date.UTC(part.year!, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!);
  return shown - Math.floor(utcMs / 1000) * 1000;
}

/**
 * The instant a wall-clock time of `timeZone` stands for (`wallMs`: that time read as if in UTC).
 * A time the clock shows twice (the hour it goes back) is read with the offset after the change,
 * a time it skips with the offset before it: either way a real instant, an hour off at worst, and
 * only in that hour of the year.
 */
export function wallTimeToUtc(wallMs: number, timeZone: string): number {
  const guess = wallMs - offsetAt(wallMs, timeZone);
  return wallMs - offsetAt(guess, timeZone);
}

/** A tombstone flag: true, `t`, `true`, `1`, `yes`, `y` (any case); anything else is "not deleted". */
export function isTruthyFlag(value: unknown): boolean {
  if (value === true) return true;
  if (typeof value === 'number') return value === 1;
  if (typeof value !== 'string') return false;
  return ['t', 'true', '1', 'yes', 'y'].includes(value.trim().toLowerCase());
}
