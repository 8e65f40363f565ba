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
  /** Whether `columns` names no place for the column (it is read from a field of its own name). */
  unnamed(column: string): boolean;
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
    unnamed: (column) =>
      settings.columns[column] === undefined && !(column === 'sourceId' && keyProperties.length === 1),
    text: (record, path) => textAt(record, parsePath(path)),
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
    const path = parsePath(setting);
    return { get: (r) => textAt(r, path), label: labelOf(setting, column), paths: [setting] };
  }
  if (Array.isArray(setting)) {
    const paths = setting.map(parsePath);
    return {
      get: (r) => joined(r, paths),
      label: `${setting.join(' + ')} (${column})`,
      paths: setting,
    };
  }
  if ('value' in setting) return { get: () => setting.value.trim(), label: column, paths: [] };
  if ('first' in setting) {
    const groups = setting.first.map((entry) => (Array.isArray(entry) ? entry : [entry]).map(parsePath));
    const otherwise = setting.otherwise?.trim() ?? '';
    return {
      get: (r) => {
        for (const group of groups) {
          const text = joined(r, group);
          if (text !== '') return text;
        }
        return otherwise;
      },
      label: `${setting.first.map((e) => (Array.isArray(e) ? e.join(' + ') : e)).join(' or ')} (${column})`,
      paths: setting.first.flat(),
    };
  }
  const path = parsePath(setting.path);
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

/** The non-empty values of several paths, joined with ", ". */
const joined = (record: JsonObject, paths: readonly (readonly Step[])[]): string =>
  paths
    .map((p) => textAt(record, p))
    .filter((t) => t !== '')
    .join(', ');

const labelOf = (path: string, column: string): string => (path === column ? column : `${path} (${column})`);

/** One step of a path: a field, or the element of an array whose field has a value. */
interface Step {
  key: string;
  where?: { field: string; value: string };
}

/**
 * `address.city` -> two steps; `Addresses.0.City` reads an array's first element;
 * `Addresses[AddressType=STREET].City` the element whose `AddressType` is `STREET` (compared as
 * text, case-insensitively).
 */
export function parsePath(path: string): Step[] {
  const steps: Step[] = [];
  for (const part of path.match(/[^.[]+(?:\[[^\]]*\])?/g) ?? []) {
    const m = /^([^[]+)\[([^=\]]+)=([^\]]*)\]$/.exec(part);
    steps.push(
      m ? { key: m[1]!, where: { field: m[2]!.trim(), value: m[3]!.trim().toLowerCase() } } : { key: part },
    );
  }
  return steps;
}

/** The object or array holding the last step's value, and that value. */
function stepInto(holder: unknown, step: Step): unknown {
  if (typeof holder !== 'object' || holder === null) return undefined;
  const value = (holder as Record<string, unknown>)[step.key];
  if (step.where === undefined) return value;
  if (!Array.isArray(value)) return undefined;
  const { field, value: wanted } = step.where;
  return value.find(
    (element) =>
      typeof element === 'object' &&
      element !== null &&
      String((element as Record<string, unknown>)[field] ?? '').toLowerCase() === wanted,
  );
}

/**
 * The value at a path as text: strings trimmed, numbers as the tap wrote them, booleans as
 * `true`/`false`, null or absent as `''`, an array of scalars joined with `|` (tags), anything else
 * as JSON.
 */
function textAt(record: JsonObject, path: readonly Step[]): string {
  let holder: unknown = record;
  for (let i = 0; i < path.length - 1; i++) holder = stepInto(holder, path[i]!);
  if (typeof holder !== 'object' || holder === null) return '';
  const last = path[path.length - 1]!;
  if (last.where !== undefined) {
    const element = stepInto(holder, last);
    return element === undefined ? '' : JSON.stringify(element);
  }
  const value = (holder as Record<string, unknown>)[last.key];
  return textOfValue(holder, last.key, value);
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
