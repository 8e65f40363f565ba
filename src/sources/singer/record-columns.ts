import type { SingerColumnSetting, SingerStreamSettings } from '../../config/singer-source-schema.js';
import { formatDecimal, SCALE } from '../../domain/decimal.js';
import type { Stream } from '../../domain/records.js';
import { CONTRACT_COLUMNS, EXTRA_COLUMNS } from '../../records/columns.js';
import type { RowView } from '../../records/record-builders.js';
import { exactNumberText, type JsonObject } from './singer-messages.js';

/**
 * How a tap stream's records give the contract's columns: each column's getter, compiled once per
 * stream from `columns` (a dot path, several joined, a constant, the first with a value, a mapped
 * path). A column not named there is read from a field of its own name, and `sourceId` from the
 * stream's single key property. Values are turned into the text the contract's checks read:
 * numbers as the tap wrote them, minor units shifted, a date-time's date as written.
 */

type Getter = (record: JsonObject) => string;

/** One column's way out of a record, and how it names it for a reason. */
interface PlannedColumn {
  get: Getter;
  /** `total (totalAmount)`, as a refused value names where it came from. */
  label: string;
  /** Paths it reads (empty for a constant). */
  paths: readonly string[];
}

const AMOUNTS = new Set(['totalAmount', 'taxAmount', 'paidAmount', 'openAmount']);
const DATES = new Set(['issuedDate', 'dueDate']);
/** `2026-01-19T09:05:00.000000Z`, `2026-01-19 09:05`: the date as written counts. */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}/;

export interface RecordColumns {
  readonly stream: Stream;
  /** The record's view for the contract's builders, and the reasons conversions gave. */
  view(record: JsonObject): RowView;
  /** `total (totalAmount)`: where a contract column is read from, for reports. */
  label(column: string): string;
  /** The value at a dot path, as text (for `skip` rules and the raw row of a failure). */
  text(record: JsonObject, path: string): string;
}

/**
 * Plans a stream's columns. `keyProperties`: the stream's SCHEMA's, giving `sourceId` when neither
 * `columns` nor a `sourceId` field does.
 */
export function recordColumns(
  settings: SingerStreamSettings,
  keyProperties: readonly string[],
): RecordColumns {
  const stream = settings.kind;
  const planned = new Map<string, PlannedColumn>();
  const names = [...CONTRACT_COLUMNS[stream].map((c) => c.name), ...EXTRA_COLUMNS[stream]];
  for (const column of names) {
    const setting = settings.columns[column];
    if (setting !== undefined) planned.set(column, plan(column, setting));
    else if (column === 'sourceId' && keyProperties.length === 1)
      planned.set(column, plan(column, keyProperties[0]!));
    else planned.set(column, { ...plan(column, column), label: column });
  }
  const minor = settings.minorUnits;
  return {
    stream,
    label: (column) => planned.get(column)?.label ?? column,
    text: (record, path) => textAt(record, path.split('.')),
    view(record) {
      let reasons: Map<string, string> | undefined;
      const read = (column: string): string => {
        const text = planned.get(column)?.get(record) ?? '';
        if (text === '') return text;
        if (AMOUNTS.has(column) && minor !== null) {
          const shifted = fromMinorUnits(text, minor);
          if (shifted !== null) return shifted;
          reasons ??= new Map();
          reasons.set(
            column,
            `not an integer amount in minor units (minorUnits: ${minor} decimals): "${text}"`,
          );
          return `\u0000${text}`;
        }
        if (DATES.has(column)) return DATE_TIME.exec(text)?.[1] ?? text;
        return text;
      };
      const get = (column: string): string => {
        if (
          column === 'paidAmount' &&
          settings.columns.paidAmount === undefined &&
          settings.columns.openAmount
        )
          return paidFromOpen(read);
        return read(column);
      };
      return {
        get,
        explain: (column) => {
          const reason = reasons?.get(column);
          if (reason !== undefined) return `${planned.get(column)?.label ?? column}: ${reason}`;
          return undefined;
        },
      };
    },
  };
}

/** Paid = total - open, for taps that give what is still due (QuickBooks's `Balance`). */
function paidFromOpen(read: (column: string) => string): string {
  const total = read('totalAmount');
  const open = read('openAmount');
  if (total === '' || open === '') return '';
  const t = toUnits(total);
  const o = toUnits(open);
  return t === null || o === null ? '' : formatDecimal(t - o);
}

/** A plain decimal as scaled units, or null (its own check then names it). */
function toUnits(text: string): bigint | null {
  const m = /^([+-])?(\d+)(?:\.(\d+))?$/.exec(text);
  if (m === null || (m[3] ?? '').length > SCALE) return null;
  const units = BigInt(m[2]!) * 10n ** BigInt(SCALE) + BigInt((m[3] ?? '').padEnd(SCALE, '0'));
  return m[1] === '-' ? -units : units;
}

/** `125000` in cents -> `1250.00`; null when the text is not an integer. */
function fromMinorUnits(text: string, decimals: number): string | null {
  if (!/^[+-]?\d+$/.test(text)) return null;
  return formatDecimal(BigInt(text) * 10n ** BigInt(SCALE - decimals));
}

function plan(column: string, setting: SingerColumnSetting): PlannedColumn {
  if (typeof setting === 'string') {
    const path = setting.split('.');
    return { get: (r) => textAt(r, path), label: labelOf(setting, column), paths: [setting] };
  }
  if (Array.isArray(setting)) {
    const paths = setting.map((p) => p.split('.'));
    return {
      get: (r) =>
        paths
          .map((p) => textAt(r, p))
          .filter((t) => t !== '')
          .join(', '),
      label: `${setting.join(' + ')} (${column})`,
      paths: setting,
    };
  }
  if ('value' in setting) return { get: () => setting.value.trim(), label: column, paths: [] };
  if ('first' in setting) {
    const paths = setting.first.map((p) => p.split('.'));
    const otherwise = setting.otherwise?.trim() ?? '';
    return {
      get: (r) => {
        for (const p of paths) {
          const text = textAt(r, p);
          if (text !== '') return text;
        }
        return otherwise;
      },
      label: `${setting.first.join(' or ')} (${column})`,
      paths: setting.first,
    };
  }
  const path = setting.path.split('.');
  const map = new Map(Object.entries(setting.map).map(([from, to]) => [from.trim().toLowerCase(), to]));
  return {
    get: (r) => {
      const text = textAt(r, path);
      return map.get(text.toLowerCase()) ?? text;
    },
    label: labelOf(setting.path, column),
    paths: [setting.path],
  };
}

const labelOf = (path: string, column: string): string => (path === column ? column : `${path} (${column})`);

/**
 * The value at a path as text: strings trimmed, numbers as the tap wrote them, booleans as
 * `true`/`false`, null or absent as `''`, an array of scalars joined with `|` (tags), anything else
 * as JSON.
 */
function textAt(record: JsonObject, path: readonly string[]): string {
  let holder: unknown = record;
  for (let i = 0; i < path.length - 1; i++) {
    if (typeof holder !== 'object' || holder === null) return '';
    holder = (holder as Record<string, unknown>)[path[i]!];
  }
  if (typeof holder !== 'object' || holder === null) return '';
  const key = path[path.length - 1]!;
  const value = (holder as Record<string, unknown>)[key];
  return textOfValue(holder, key, value);
}

function textOfValue(holder: object, key: string, value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number') return exactNumberText(holder, key, value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    return value
      .map((v, i) =>
        typeof v === 'object' && v !== null ? JSON.stringify(v) : textOfValue(value, String(i), v),
      )
      .filter((t) => t !== '')
      .join('|');
  }
  return JSON.stringify(value);
}
