import { type Decimal, formatDecimal, parseDecimal } from '../../domain/decimal.js';
import type { Stream } from '../../domain/records.js';
import { checkAmount } from '../../records/field-validators.js';
import type { RowIssue } from '../../records/record-builders.js';
import type { CsvRow } from './csv-rows.js';
import type { RowShape } from './row-shape.js';
import { ShapedRow, type ShapedRowOptions } from './shaped-row.js';

/** A record-to-be of a file with a shape: its kind, its values, and where it starts. */
export interface ShapedRecordRow {
  kind: Stream;
  view: ShapedRow;
  line: number;
  /** The fields of the row it starts on (the first of a grouped document's rows). */
  fields: readonly string[];
  /** Problems found over several rows (a summed amount one of them cannot give). */
  issues: readonly RowIssue[];
  /** Rows it was made of (1, or a grouped document's). */
  rows: number;
}

interface OpenGroup {
  key: string;
  kind: Stream;
  negate: boolean;
  first: CsvRow;
  sums: Map<string, Decimal>;
  issues: RowIssue[];
  rows: number;
}

/** A row's kind once its sign is read, and whether its amounts change sign. */
interface SettledKind {
  readonly kind: Stream;
  readonly negate: boolean;
}

/** The settled kinds a row can get, made once (a row's own kind as written, or a credit note negated). */
const AS_WRITTEN: Readonly<Record<Stream, SettledKind>> = {
  accounts: { kind: 'accounts', negate: false },
  invoices: { kind: 'invoices', negate: false },
  creditNotes: { kind: 'creditNotes', negate: false },
};
const CREDIT_NOTE_NEGATED: SettledKind = { kind: 'creditNotes', negate: true };

/** The view options of a row whose amounts change sign: one object for all such rows, never changed. */
const NEGATED: ShapedRowOptions = Object.freeze({ negate: true });

/** The issues of a record made of one row: none (only a grouped document's rows add some). */
const NO_ISSUES: readonly RowIssue[] = Object.freeze([]);

/**
 * Turns a shaped file's rows into records-to-be, in order: rows to skip are counted, a row's kind
 * comes from its `kindFrom` value (others skipped) or its negative total, an account named by a
 * document row comes out before it (once per file), and the rows of one document (same sourceId,
 * one after the other) make one, its summed columns added up exactly.
 */
export class RowShaper {
  /** Rows that made no record: skipped by a rule, or of a kind the file does not sync. */
  skipped = 0;
  readonly #shape: RowShape;
  readonly #accounts = new Set<string>();
  #open: OpenGroup | null = null;

  constructor(shape: RowShape) {
    this.#shape = shape;
  }

  /** What `row` makes now: none, an account, and/or the document a group closed. */
  take(row: CsvRow): ShapedRecordRow[] {
    const shape = this.#shape;
    for (const skip of shape.skip) {
      if (skip(row.fields)) {
        this.skipped++;
        return [];
      }
    }
    let kind = shape.stream;
    if (shape.kindFrom) {
      const value = (row.fields[shape.kindFrom.index] ?? '').trim().toLowerCase();
      const found = shape.kindFrom.kinds.get(value);
      if (found === undefined) {
        this.skipped++;
        return [];
      }
      kind = found;
    }
    const account = shape.deriveAccounts ? this.#newAccount(row) : null;
    if (shape.group && kind !== 'accounts') {
      const key = this.#view(row, kind, false).get('sourceId');
      const open = this.#open;
      if (open !== null && key !== '' && open.key === key && open.kind === this.#kindOf(row, kind).kind) {
        this.#add(open, row);
        return account === null ? [] : [account];
      }
      const closed = this.flush();
      this.#open = this.#start(row, kind, key);
      return account === null ? closed : [account, ...closed];
    }
    const settled = this.#kindOf(row, kind);
    const document: ShapedRecordRow = {
      kind: settled.kind,
      view: this.#view(row, settled.kind, settled.negate),
      line: row.line,
      fields: row.fields,
      issues: NO_ISSUES,
      rows: 1,
    };
    // Array literals of their exact length: most rows make one record, and a million of them
    // should not each leave a grown array behind for the garbage collector.
    return account === null ? [document] : [account, document];
  }

  /** The account a document row names, the first time the file names it; null after (or without one). */
  #newAccount(row: CsvRow): ShapedRecordRow | null {
    const account = this.#view(row, 'accounts', false);
    const key = account.get('sourceId');
    if (key === '' || this.#accounts.has(key)) return null;
    this.#accounts.add(key);
    return {
      kind: 'accounts',
      view: account,
      line: row.line,
      fields: row.fields,
      issues: NO_ISSUES,
      rows: 1,
    };
  }

  /** The document of the rows still grouped (at the end of the file, or when the next starts). */
  flush(): ShapedRecordRow[] {
    const open = this.#open;
    if (open === null) return [];
    this.#open = null;
    const overrides = new Map<string, string>();
    for (const [column, sum] of open.sums) overrides.set(column, formatDecimal(open.negate ? -sum : sum));
    const view = new ShapedRow(open.first.fields, this.#plan(open.kind), this.#shape.format, {
      negate: open.negate,
      overrides,
    });
    return [
      {
        kind: open.kind,
        view,
        line: open.first.line,
        fields: open.first.fields,
        issues: open.issues,
        rows: open.rows,
      },
    ];
  }

  #start(row: CsvRow, fileKind: Stream, key: string): OpenGroup {
    const { kind, negate } = this.#kindOf(row, fileKind);
    const group: OpenGroup = { key, kind, negate, first: row, sums: new Map(), issues: [], rows: 0 };
    for (const column of this.#shape.group?.sum ?? []) group.sums.set(column, 0n);
    this.#add(group, row);
    return group;
  }

  #add(group: OpenGroup, row: CsvRow): void {
    group.rows++;
    if (group.sums.size === 0) return;
    // Summed as written (before any change of sign): the sign is the document's, applied at the end.
    const view = this.#view(row, group.kind, false);
    for (const [column, sum] of group.sums) {
      const text = view.get(column);
      if (text === '') continue;
      const amount = checkAmount(text);
      if (amount.ok) group.sums.set(column, sum + parseDecimal(amount.value));
      else
        group.issues.push({
          column,
          reason: `line ${row.line}: ${view.explain(column) ?? amount.reason} (the document's rows are summed)`,
        });
    }
  }

  /**
   * A credit note written with a negative total (as many exports do) is made positive; with
   * `negativeIsCreditNote`, so is an invoice row with a negative total, which is a credit note.
   */
  #kindOf(row: CsvRow, kind: Stream): SettledKind {
    if (kind === 'accounts' || (kind === 'invoices' && !this.#shape.negativeIsCreditNote))
      return AS_WRITTEN[kind];
    // The sign as written (`-238,00`, `238,00-`, `(238.00)`), or of the sum of its columns.
    if (!this.#view(row, kind, false).isNegative('totalAmount')) return AS_WRITTEN[kind];
    if (kind === 'creditNotes') return CREDIT_NOTE_NEGATED;
    return this.#shape.negativeIsCreditNote ? CREDIT_NOTE_NEGATED : AS_WRITTEN[kind];
  }

  #view(row: CsvRow, kind: Stream, negate: boolean): ShapedRow {
    return new ShapedRow(row.fields, this.#plan(kind), this.#shape.format, negate ? NEGATED : undefined);
  }

  #plan(kind: Stream) {
    const plan = this.#shape.plans[kind];
    if (!plan) throw new Error(`no column plan for ${kind}`);
    return plan;
  }
}
