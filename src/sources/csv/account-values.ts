import type { ColumnRef, ColumnSourceSetting } from '../../config/csv-format-schema.js';
import type { Stream } from '../../domain/records.js';

type ColumnsSettings = Partial<Record<Stream, Readonly<Record<string, ColumnSourceSetting>> | undefined>>;

/** A column of the accounts files that a document column reads (`plusDays: { accountColumn: AD }`). */
export interface AccountColumn {
  ref: ColumnRef;
  /** Where the configuration names it, for messages: `columns.invoices.dueDate.plusDays.accountColumn`. */
  key: string;
}

/** An account's value of such a column, and where it was read. */
export interface AccountValue {
  value: string;
  file: string;
  line: number;
}

/** The accounts' columns the documents' columns read, once each. */
export function accountColumnsRead(columns: ColumnsSettings | undefined): AccountColumn[] {
  const found = new Map<string, AccountColumn>();
  for (const stream of ['invoices', 'creditNotes'] as const)
    for (const [column, setting] of Object.entries(columns?.[stream] ?? {})) {
      const ref = accountColumnOf(setting);
      if (ref !== null && !found.has(refKey(ref)))
        found.set(refKey(ref), { ref, key: `columns.${stream}.${column}.plusDays.accountColumn` });
    }
  return [...found.values()];
}

/** Whether a kind's columns read values of the accounts files (its files wait for them). */
export const readsAccountValues = (columns: ColumnsSettings | undefined, stream: Stream): boolean =>
  stream !== 'accounts' && Object.values(columns?.[stream] ?? {}).some((s) => accountColumnOf(s) !== null);

const accountColumnOf = (setting: ColumnSourceSetting): ColumnRef | null =>
  typeof setting === 'object' &&
  !Array.isArray(setting) &&
  'plusDays' in setting &&
  typeof setting.plusDays === 'object'
    ? setting.plusDays.accountColumn
    : null;

const refKey = (ref: ColumnRef): string => (typeof ref === 'number' ? `#${ref}` : ref.trim().toUpperCase());

export interface AccountValuesProps {
  /** `files.accounts`: the names an accounts file goes by, for the hint to drop one. */
  patterns: readonly string[];
  /** The accounts files have no header: their columns are named by letter. */
  headerless: boolean;
  /** The source's `columns`: which kinds read which columns of the accounts files. */
  columns?: ColumnsSettings | undefined;
}

/**
 * The values of the accounts files read in this pass that document columns read, by account
 * sourceId: a due date from the account's own payment terms (Sage 50's "Payment Due Days", column
 * AD of its customer file, for the invoices of its audit trail). Files are read accounts first: an
 * accounts file records its rows' values as they are read (`record`), the documents after it read
 * them (`lookup`). The CSV source holds one and empties it at the start of each pass: a value is
 * never taken from an earlier pass, where the account may have said otherwise.
 */
export class AccountValues {
  readonly #values = new Map<string, Map<string, AccountValue>>();
  readonly #files: string[] = [];
  /** The accounts' columns the documents read. */
  readonly columns: readonly AccountColumn[];

  constructor(private readonly props: AccountValuesProps) {
    this.columns = accountColumnsRead(props.columns);
  }

  /**
   * Why a file of `stream` is read again though its content was synced before, or null. An
   * accounts file whose columns the documents read gives its values to the documents of the same
   * pass only; and the documents that read them follow what the accounts file of this pass says
   * (a customer's payment terms changed), when one was read. Unchanged rows cost no API call.
   */
  readAgain(stream: Stream): string | null {
    if (this.columns.length === 0) return null;
    if (stream === 'accounts')
      return `the documents read its ${this.columns.map((c) => `${this.columnName(c.ref)} (${c.key})`).join(', ')}`;
    if (readsAccountValues(this.props.columns, stream) && this.#files.length > 0)
      return `its columns read the accounts file read in this pass (${this.#files.join(', ')})`;
    return null;
  }

  /** Forgets the values of the last pass. */
  clear(): void {
    this.#values.clear();
    this.#files.length = 0;
  }

  /** An accounts file is being read: its rows' values follow. */
  fileRead(name: string): void {
    this.#files.push(name);
  }

  /** The accounts files read in this pass. */
  get files(): readonly string[] {
    return this.#files;
  }

  /** An account's value of a column; a later file's row replaces an earlier one's. */
  record(ref: ColumnRef, account: string, value: AccountValue): void {
    const key = refKey(ref);
    let byAccount = this.#values.get(key);
    if (byAccount === undefined) {
      byAccount = new Map();
      this.#values.set(key, byAccount);
    }
    byAccount.set(account, value);
  }

  lookup(ref: ColumnRef, account: string): AccountValue | undefined {
    return this.#values.get(refKey(ref))?.get(account);
  }

  /** The column as the accounts file names it: `column AD`, or `"Payment Days"`. */
  columnName(ref: ColumnRef): string {
    if (typeof ref === 'number') return `column ${ref}`;
    return this.props.headerless ? `column ${ref.trim().toUpperCase()}` : `"${ref}"`;
  }

  /**
   * Why a document of `account` cannot have its value of column `ref` in this pass: no accounts
   * file was read, or none held the account. The row fails; dropping the accounts file with the
   * documents again syncs it.
   */
  unknownReason(ref: ColumnRef, account: string): string {
    const what = `the days in ${this.columnName(ref)} of account "${account}" in the accounts file`;
    const patterns = this.props.patterns.map((p) => `"${p}"`).join(' or ');
    if (this.#files.length === 0)
      return `${what} are not known: no accounts file was read in this pass; drop the accounts file (${patterns}) together with this one`;
    return `${what} are not known: the accounts file${this.#files.length === 1 ? '' : 's'} read in this pass (${this.#files.join(', ')}) hold${this.#files.length === 1 ? 's' : ''} no account "${account}"; drop the accounts file that has it together with this one`;
  }
}
