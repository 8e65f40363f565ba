import { formatDecimal, parseDecimal } from '../../domain/decimal.js';
import { type DateParts, isoDateOf } from '../../domain/records.js';
import { type Checked, checkAmount, isPlainDecimal } from '../../records/field-validators.js';
import type { RowView } from '../../records/record-builders.js';
import { isPlainFormat, type NumberFormat, plainAmount, quickPlainAmount } from './amount-format.js';
import {
  type AccountDays,
  type ColumnPlan,
  type ColumnSource,
  cellName,
  fileColumnName,
  indexesOf,
} from './column-plan.js';
import type { DateReader } from './date-format.js';
import { trimmed } from './row-fields.js';

/** How a file writes amounts and dates, as its rows are read. */
export interface ValueFormat {
  number: NumberFormat;
  date: DateReader;
  /** The date pattern, for messages. */
  dateFormat: string;
}

/** How a `ShapedRow` reads its row besides its plan and format. */
export interface ShapedRowOptions {
  /** Amounts change sign (a negative invoice read as a credit note). */
  readonly negate?: boolean;
  /** Values computed over several rows (a grouped document's sums), by column. */
  readonly overrides?: ReadonlyMap<string, string>;
}

/** A row read as written: one object for every such row, never changed. */
const NO_OPTIONS: ShapedRowOptions = Object.freeze({});

/** Starts a value this view could not read: no contract check accepts it. */
const UNREADABLE = '\u0000';

/**
 * A row of a file with `columns` or a format of its own, by contract column: each value from
 * where the plan says (a header, headers joined, a constant, a translated value, amounts added
 * up, a date plus days), amounts and dates rewritten into the contract's form (`1.440,00` ->
 * `1440.00`, `12.01.2026` -> `2026-01-12`). A value that cannot be read fails its record's check,
 * and `explain` says why in the file's terms, so the report quotes it as the file writes it.
 */
export class ShapedRow implements RowView {
  #reasons: Map<string, string> | undefined;

  constructor(
    private readonly fields: readonly string[],
    private readonly plan: ColumnPlan,
    private readonly format: ValueFormat,
    private readonly options: ShapedRowOptions = NO_OPTIONS,
  ) {}

  get(column: string): string {
    const overrides = this.options.overrides;
    if (overrides !== undefined) {
      const override = overrides.get(column);
      if (override !== undefined) return override;
    }
    const planned = this.plan.columns[column];
    if (planned === undefined) return column === 'paidAmount' ? this.#paidFromOpen() : '';
    const { source } = planned;
    // Computed values (a sum, a date plus days) off the common path of a plain cell.
    if (source.from !== 'cell') {
      if (source.from === 'sum') return this.#sum(column, source.indexes, this.options.negate === true);
      if (source.from === 'plusDays') return this.#plusDays(column, source.index, source.days);
    }
    const raw =
      source.from === 'cell' ? trimmed(this.fields[source.index] ?? '') : cellValue(source, this.fields);
    // A constant of the configuration is written in the contract's form, not the file's.
    if (raw === '' || planned.type === 'text' || source.from === 'value') return raw;
    return planned.type === 'amount' ? this.#amount(column, raw) : this.#date(column, raw);
  }

  has(column: string): boolean {
    return this.plan.sources.has(column) || (column === 'paidAmount' && this.plan.sources.has('openAmount'));
  }

  /** The column as the file names it (`Brutto (totalAmount)`), for the report. */
  columnName(column: string): string {
    return column === '' ? column : fileColumnName(this.plan, column);
  }

  /** The columns this row's record reads that a row of `width` cells lacks: `column AD (dueDate)`. */
  columnsBeyond(width: number): string[] {
    const lacking = new Set<string>();
    for (const [column, source] of this.plan.sources)
      for (const i of indexesOf(source)) if (i >= width) lacking.add(`${cellName(this.plan, i)} (${column})`);
    return [...lacking];
  }

  explain(column: string): string | undefined {
    return this.#reasons?.get(column);
  }

  /** The value as the file writes it (trimmed), '' when the column has no source. */
  raw(column: string): string {
    const source = this.plan.sources.get(column);
    return source === undefined ? '' : cellValue(source, this.fields);
  }

  /**
   * Whether an amount is written negative (`-238,00`, `238,00-`, `(238.00)`), or, added up from
   * several columns, comes to less than zero: the sign a credit note may be told by.
   */
  isNegative(column: string): boolean {
    const source = this.plan.sources.get(column);
    if (source?.from === 'sum') return this.#sum(column, source.indexes, false).startsWith('-');
    const written = this.raw(column);
    return written.startsWith('-') || written.endsWith('-') || written.startsWith('(');
  }

  #amount(column: string, raw: string): string {
    // The common forms are read without a result object (three amounts a row, on files of a
    // million rows); the others, refusals included, by the full reading.
    const number = this.format.number;
    let plain = isPlainFormat(number) && isPlainDecimal(raw) ? raw : quickPlainAmount(raw, number);
    if (plain === null) {
      const read = this.#plain(raw);
      if (!read.ok) return this.#refuse(column, raw, read.reason);
      plain = read.value;
    }
    return this.options.negate ? negated(plain) : plain;
  }

  /** An amount of the file in the contract's form, or why the file's format cannot read it. */
  #plain(raw: string): Checked<string> {
    const number = this.format.number;
    // The contract's own form needs no rewriting; anything else is read in the file's format, so
    // a `1.234,55` in a file said to write `1234.55` is refused with the setting to check.
    if (isPlainFormat(number) && isPlainDecimal(raw)) return { ok: true, value: raw };
    return plainAmount(raw, number);
  }

  /**
   * The amounts of several cells added up exactly (bigint, never a JS number); an empty cell
   * counts as zero, all of them empty give no value. A cell that is no amount fails the column,
   * naming that cell (`column J: not an amount in the form 1234.56: "n/a"`).
   */
  #sum(column: string, indexes: readonly number[], negate: boolean): string {
    let total = 0n;
    let any = false;
    for (const i of indexes) {
      const raw = trimmed(this.fields[i] ?? '');
      if (raw === '') continue;
      any = true;
      const read = this.#plain(raw);
      const amount = read.ok ? checkAmount(read.value) : read;
      if (!amount.ok) return this.#refuse(column, raw, `${cellName(this.plan, i)}: ${amount.reason}`);
      total += parseDecimal(amount.value);
    }
    if (!any) return '';
    return formatDecimal(negate ? -total : total);
  }

  /**
   * A date of the row plus days: a constant, or the account's, from the accounts file read in the
   * same pass (`plusDays: { accountColumn: AD }`). An account whose days are not known in this
   * pass fails the row, saying which file to drop with this one: never a date made up without them.
   */
  #plusDays(column: string, index: number, days: number | AccountDays): string {
    const raw = trimmed(this.fields[index] ?? '');
    if (raw === '') return '';
    const read = this.format.date(raw);
    if (!read.ok) return this.#refuse(column, raw, read.reason);
    if (typeof days === 'number') return isoDateOf(addDays(read.value, days));
    const account = this.get('accountSourceId');
    // No account: its own column says so (required); a date cannot be made without its days.
    if (account === '') return '';
    const found = days.values.lookup(days.ref, account);
    if (found === undefined) return this.#refuse(column, raw, days.values.unknownReason(days.ref, account));
    const where = `${days.values.columnName(days.ref)} of account "${account}" (${found.file}, line ${found.line})`;
    if (found.value === '')
      return this.#refuse(
        column,
        raw,
        `the days to add are empty in ${where}: fill them in the accounts file`,
      );
    if (!/^\d{1,5}$/.test(found.value))
      return this.#refuse(
        column,
        raw,
        `the days to add are not a whole number of days in ${where}: "${found.value}"`,
      );
    return isoDateOf(addDays(read.value, Number(found.value)));
  }

  #date(column: string, raw: string): string {
    // The reader remembers each distinct text: a million rows parse a year's dates once.
    const text = this.format.date.contractText(raw);
    if (text !== null) return text;
    // No contract text: the reader refuses the text, and says why.
    const read = this.format.date(raw);
    return read.ok ? isoDateOf(read.value) : this.#refuse(column, raw, read.reason);
  }

  /** Paid = total - open, for exports that give what is still due (`Open balance`, `Amount Due`). */
  #paidFromOpen(): string {
    if (!this.plan.sources.has('openAmount')) return '';
    const total = this.get('totalAmount');
    const open = this.get('openAmount');
    if (total === '' || open === '') return '';
    try {
      return formatDecimal(parseDecimal(total) - parseDecimal(open));
    } catch {
      // One of them cannot be read: its own check says so.
      return '';
    }
  }

  /**
   * Records why, and gives a text no check accepts: `12.5` in a file of `1.234,56` must not pass
   * for the contract's 12.5 because it happens to read that way there.
   */
  #refuse(column: string, raw: string, reason: string): string {
    this.#reasons ??= new Map();
    this.#reasons.set(column, reason);
    return `${UNREADABLE}${raw}`;
  }
}

/** A column's value in a row, as the file writes it (trimmed). */
function cellValue(source: ColumnSource, fields: readonly string[]): string {
  switch (source.from) {
    case 'cell':
      return trimmed(fields[source.index] ?? '');
    case 'cells':
      return source.indexes
        .map((i) => trimmed(fields[i] ?? ''))
        .filter((v) => v !== '')
        .join(', ');
    case 'value':
      return source.value;
    case 'first':
      for (const i of source.indexes) {
        const value = trimmed(fields[i] ?? '');
        if (value !== '') return value;
      }
      return '';
    case 'map': {
      const value = trimmed(fields[source.index] ?? '');
      return source.map.get(value.toLowerCase()) ?? value;
    }
    case 'sum':
      return source.indexes
        .map((i) => trimmed(fields[i] ?? ''))
        .filter((v) => v !== '')
        .join(' + ');
    case 'plusDays':
      return trimmed(fields[source.index] ?? '');
  }
}

/** A calendar date `days` later (UTC arithmetic: no time zone or daylight saving moves it). */
export function addDays(date: DateParts, days: number): DateParts {
  const at = new Date(0);
  at.setUTCFullYear(date.year, date.month - 1, date.day + days);
  return { year: at.getUTCFullYear(), month: at.getUTCMonth() + 1, day: at.getUTCDate() };
}

/** `12.50` -> `-12.50`, `-3` -> `3`. */
export const negated = (plain: string): string => (plain.startsWith('-') ? plain.slice(1) : `-${plain}`);
