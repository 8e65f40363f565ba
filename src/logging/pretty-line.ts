import { printable } from './printable-text.js';
import { PLAIN, type TerminalStyle, type Tone } from './terminal-style.js';

/**
 * One log entry as a person reads it on a terminal:
 * `12:03:04 WARN  record failed  invoice INV-7 (invoices.csv line 3): account "C-404" is unknown [code]  attempt=2`.
 * Pure: the entry is pino's JSON line, parsed (so it is already redacted).
 */

/** A pino log entry (its JSON line, parsed). */
export interface LogEntry {
  level?: number;
  time?: number;
  msg?: string;
  [field: string]: unknown;
}

const LEVEL_NAMES: Readonly<Record<number, string>> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** The levels worth a colour on a terminal: warnings yellow, errors red. */
const LEVEL_TONES: Readonly<Record<number, Tone>> = { 40: 'warning', 50: 'error', 60: 'error' };

/**
 * Fields every line of a pass carries, or only machines need (the rate limiter's budget key is a
 * hash): left out of the readable line; the JSON lines keep them.
 */
const CONTEXT_FIELDS: ReadonlySet<string> = new Set([
  'level',
  'time',
  'msg',
  'app',
  'pid',
  'hostname',
  'sourceId',
  'runId',
  'component',
  'store',
  'event',
  'key',
  'stage',
]);

const two = (n: number) => String(n).padStart(2, '0');

/** `HH:MM:SS` in local time. */
export const clockTime = (epochMs: number): string => {
  const t = new Date(epochMs);
  return `${two(t.getHours())}:${two(t.getMinutes())}:${two(t.getSeconds())}`;
};

/**
 * The readable line of one entry, without its newline. Control characters of any field (a file
 * name holding a line break or an ESC sequence) are escaped: the line stays one line and cannot
 * drive the terminal. `style` colours the level of a warning or an error (a terminal's).
 */
export function prettyLine(entry: LogEntry, style: TerminalStyle = PLAIN): string {
  const name = printable(LEVEL_NAMES[entry.level ?? 30] ?? `L${entry.level}`);
  const tone = LEVEL_TONES[entry.level ?? 30];
  // The level's name in its colour (a terminal's), its padding left out of the colour.
  const level = `${tone ? style.tone(tone, name) : name}${' '.repeat(Math.max(0, 5 - name.length))}`;
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  const parts = [msg];
  const used = new Set<string>();
  const detail = detailOf(entry, used);
  if (detail) parts.push(detail);
  const rest = restOf(entry, msg, used);
  if (rest) parts.push(rest);
  return `${entry.time === undefined ? '--:--:--' : clockTime(entry.time)} ${level} ${printable(parts.join('  '))}`;
}

/**
 * `invoice INV-7 (invoices.csv line 3, accountSourceId): the reason [the API code]`, from the
 * fields it names (added to `used`, so they are not repeated as `name=value`).
 */
function detailOf(entry: LogEntry, used: Set<string>): string {
  const take = (name: string): string | undefined => {
    const value = entry[name];
    if (typeof value === 'number') {
      used.add(name);
      return String(value);
    }
    if (typeof value !== 'string' || value === '') return undefined;
    used.add(name);
    return value;
  };
  const key = take('sourceKey');
  const file = take('file') ?? take('unit');
  let subject = key ? [take('kind'), key].filter(Boolean).join(' ') : (file ?? '');
  const line = take('line');
  const place = [key ? file : undefined, line ? `line ${line}` : undefined].filter(Boolean).join(' ');
  const where = [place, take('column')].filter(Boolean);
  if (where.length > 0) subject += subject ? ` (${where.join(', ')})` : where.join(', ');
  const reason = reasonOf(entry, used);
  const status = take('status');
  const code = take('apiCode') ?? take('code') ?? (status ? `HTTP ${status}` : undefined);
  let detail = subject && reason ? `${subject}: ${reason}` : subject || (reason ?? '');
  if (code) detail += detail ? ` [${code}]` : `[${code}]`;
  return detail;
}

/** The reason of a failure: `reason`, or an error's message (`err`, `error`). */
function reasonOf(entry: LogEntry, used: Set<string>): string | undefined {
  for (const name of ['reason', 'err', 'error']) {
    const value = entry[name];
    const message =
      typeof value === 'string'
        ? value
        : value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string'
          ? (value as { message: string }).message
          : '';
    if (message !== '') {
      used.add(name);
      return message;
    }
  }
  return undefined;
}

/** The other fields, `name=value`; nulls and a value that only repeats the message are left out. */
function restOf(entry: LogEntry, msg: string, used: ReadonlySet<string>): string {
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(entry)) {
    if (CONTEXT_FIELDS.has(name) || used.has(name)) continue;
    if (value === null || value === undefined || value === msg) continue;
    pairs.push(`${name}=${valueText(value)}`);
  }
  return pairs.join(' ');
}

const MAX_VALUE = 200;

function valueText(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = /^[^\s="]+$/.test(value) ? value : JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}
