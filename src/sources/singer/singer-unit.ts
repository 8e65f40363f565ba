import type { SingerSettings, SingerStreamSettings } from '../../config/singer-source-schema.js';
import type { RecordOrigin, RowProblem, SourceRecord, Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import { KIND_OF_STREAM } from '../../records/columns.js';
import { RECORD_BUILDERS, type RowIssue, type RowView } from '../../records/record-builders.js';
import type { SourceBatch, SourceUnit } from '../source.js';
import { type RecordColumns, recordColumns } from './record-columns.js';
import { SchemaCheck } from './schema-check.js';
import { type JsonObject, type MessageReader, parseMessage, type SingerMessage } from './singer-messages.js';

/** A batch handed out while STATE messages wait behind a batch not full yet: after this long. */
const STATE_FLUSH_MS = 1_000;

/** Where the unit's messages come from, and what to do once they ended. */
export interface MessageInput {
  /** The messages, one a line. */
  lines: AsyncIterable<string>;
  /** Called once the lines ended: throws when their writer failed (a tap's non-zero exit). */
  finished(): Promise<void>;
  /** Stops the writer (a tap), when the unit stops reading before the end. */
  stop(): Promise<void>;
  /** `tap stream` (a tap the source runs) or `input stream` (the target's stdin), for reports. */
  label: string;
  /** How a line reads (default: a Singer message). */
  read?: MessageReader;
  /** A stream's SCHEMA to take before its first RECORD, when the protocol has none of its own (Airbyte's catalog). */
  schemaOf?: (stream: string) => SingerMessage | null;
}

export interface SingerUnitProps {
  sourceId: string;
  settings: SingerSettings;
  input: MessageInput;
  /**
   * A STATE whose records before it are all synced or recorded as failures, as soon as it is
   * (the target echoes it on stdout); the last one also goes to `complete`.
   */
  onState?: (value: unknown) => Promise<void>;
  /** Stores the last STATE as the source's cursor, once the unit completed. */
  storeState: (value: unknown) => Promise<void>;
  logger: Logger;
}

/** What one run of the tap (or one input) held, for `status`, logs and tests. */
export interface SingerRunStats {
  lines: number;
  records: number;
  rejected: number;
  skipped: number;
  /** Records of streams the configuration does not name, per stream. */
  ignored: Record<string, number>;
  states: number;
  /** Documents that waited for their account to arrive, and the most held at once. */
  held: number;
  mostHeld: number;
  /** Unknown message types (ACTIVATE_VERSION, BATCH...), per type. */
  otherMessages: Record<string, number>;
}

interface Item {
  seq: number;
  record?: { record: SourceRecord; origin: RecordOrigin };
  rejected?: RowProblem;
}

/**
 * One run of a tap (or one target input) as a unit of work. Its records come in the order the tap
 * wrote them, accounts and documents interleaved; a document whose account has not come yet in this
 * run waits for it (or for the end of the input) so the account is synced first. A STATE counts as
 * reached once every record before it was handed out and its batch processed (`failed`, called
 * batch by batch); `complete` stores the last one as the source's cursor: a tap that fails leaves
 * the cursor where it was, and the next pass resumes from it.
 */
export class SingerUnit implements SourceUnit {
  readonly name: string;
  readonly stream: Stream;
  readonly stats: SingerRunStats = {
    lines: 0,
    records: 0,
    rejected: 0,
    skipped: 0,
    ignored: {},
    states: 0,
    held: 0,
    mostHeld: 0,
    otherMessages: {},
  };
  readonly #props: SingerUnitProps;
  readonly #log: Logger;
  readonly #schemas = new SchemaCheck();
  readonly #columns = new Map<string, RecordColumns>();
  readonly #compiledSkips = new Map<string, ReadonlyArray<{ column: string; hits(text: string): boolean }>>();
  readonly #accountsComing: boolean;
  readonly #seenAccounts = new Set<string>();
  /** Documents waiting for their account, by the account's key, in the order they came. */
  readonly #held = new Map<string, Item[]>();
  #heldCount = 0;
  #nextSeq = 0;
  /** STATEs not yet reached: the first record after each, and its value. */
  readonly #states: Array<{ before: number; value: unknown }> = [];
  /** The lowest record of each batch handed out and not processed yet, oldest first. */
  readonly #outstanding: number[] = [];
  /** The lowest record read and not handed out (in the batch being filled), or null. */
  #filling: number | null = null;
  #lastState: { value: unknown } | null = null;
  #reachedState: { value: unknown } | null = null;
  #state: 'new' | 'reading' | 'drained' | 'settled' = 'new';
  #skipped = 0;

  constructor(props: SingerUnitProps) {
    this.#props = props;
    this.name = `${props.sourceId} (${props.input.label})`;
    const kinds = Object.values(props.settings.streams).map((s) => s.kind);
    this.stream =
      (['accounts', 'invoices', 'creditNotes'] as const).find((k) => kinds.includes(k)) ?? 'invoices';
    this.#accountsComing = kinds.includes('accounts');
    this.#log = props.logger.child({ unit: this.name });
  }

  get skippedRows(): number {
    return this.#skipped;
  }

  async *batches(): AsyncGenerator<SourceBatch> {
    if (this.#state !== 'new') throw new Error(`${this.name}: batches() read twice`);
    this.#state = 'reading';
    const { settings, input } = this.#props;
    let batch: Item[] = [];
    let batchKeys = new Map<string, number>();
    let batchStarted = Date.now();
    const take = (item: Item) => {
      // The same record twice in one batch (a tap re-sends it): the later one wins, in the earlier's place.
      const key = item.record ? `${item.record.record.kind}\u0000${item.record.record.sourceId}` : null;
      const at = key === null ? undefined : batchKeys.get(key);
      if (at !== undefined) batch[at] = { ...item, seq: Math.min(item.seq, batch[at]!.seq) };
      else {
        if (key !== null) batchKeys.set(key, batch.length);
        batch.push(item);
      }
      this.#filling ??= item.seq;
    };
    const handOut = (): SourceBatch => {
      const out = batch;
      batch = [];
      batchKeys = new Map();
      batchStarted = Date.now();
      this.#outstanding.push(this.#filling ?? this.#nextSeq);
      this.#filling = null;
      return toBatch(out);
    };
    let lineNumber = 0;
    try {
      for await (const line of input.lines) {
        lineNumber++;
        this.stats.lines++;
        const message = (input.read ?? parseMessage)(line, lineNumber);
        if (message === null) continue;
        switch (message.type) {
          case 'SCHEMA':
            this.#schema(message);
            break;
          case 'RECORD': {
            const schema = input.schemaOf?.(message.stream);
            if (schema?.type === 'SCHEMA') this.#schema(schema);
            const stream = settings.streams[message.stream];
            if (!stream) {
              this.stats.ignored[message.stream] = (this.stats.ignored[message.stream] ?? 0) + 1;
              if (this.stats.ignored[message.stream] === 1)
                this.#log.info(
                  { stream: message.stream },
                  'records of a tap stream the configuration does not name: ignored',
                );
              break;
            }
            for (const item of this.#read(message.stream, stream, message.record, lineNumber)) take(item);
            break;
          }
          case 'STATE':
            this.stats.states++;
            this.#lastState = { value: message.value };
            this.#states.push({ before: this.#nextSeq, value: message.value });
            if (batch.length > 0 && Date.now() - batchStarted >= STATE_FLUSH_MS) yield handOut();
            break;
          case 'OTHER':
            this.stats.otherMessages[message.messageType] =
              (this.stats.otherMessages[message.messageType] ?? 0) + 1;
            if (this.stats.otherMessages[message.messageType] === 1)
              this.#log.info(
                { type: message.messageType },
                'a message type this target does not use: ignored',
              );
            break;
        }
        if (batch.length >= settings.batchSize) yield handOut();
      }
      await input.finished();
    } catch (error) {
      await input.stop();
      throw error;
    }
    // The input ended: documents still waiting for an account go now (they fail if it never came).
    for (const item of this.#releaseAllHeld()) {
      take(item);
      if (batch.length >= settings.batchSize) yield handOut();
    }
    if (batch.length > 0) yield handOut();
    this.#state = 'drained';
    this.#log.info({ ...this.stats }, 'tap run read');
  }

  /** A stream's SCHEMA: its records' check and, for a stream the configuration names, its columns. */
  #schema(message: Extract<SingerMessage, { type: 'SCHEMA' }>): void {
    this.#schemas.setSchema(message.stream, message.schema);
    const uncompiled = this.#schemas.uncompiled.get(message.stream);
    if (uncompiled)
      this.#log.warn(
        { stream: message.stream, reason: uncompiled },
        'SCHEMA not usable: records checked by the contract alone',
      );
    const stream = this.#props.settings.streams[message.stream];
    if (stream) this.#columns.set(message.stream, recordColumns(stream, message.keyProperties));
  }

  /** The records one RECORD message gives (none while it waits for its account). */
  *#read(
    streamName: string,
    stream: SingerStreamSettings,
    record: JsonObject,
    line: number,
  ): Generator<Item> {
    let columns = this.#columns.get(streamName);
    if (columns === undefined) {
      // A RECORD before its SCHEMA: read it as configured, without the schema's check.
      columns = recordColumns(stream, []);
      this.#columns.set(streamName, columns);
      this.#log.warn({ stream: streamName }, "a RECORD came before its stream's SCHEMA");
    }
    for (const rule of this.#skipRules(streamName, stream)) {
      if (rule.hits(columns.text(record, rule.column))) {
        this.#skipped++;
        this.stats.skipped++;
        return;
      }
    }
    const seq = this.#nextSeq++;
    const origin: RecordOrigin = { file: `${this.#props.input.label} "${streamName}"`, line };
    const view = columns.view(record);
    const issues: RowIssue[] = [];
    const schemaProblem = this.#schemas.problem(streamName, record);
    if (schemaProblem !== null) issues.push({ column: '', reason: schemaProblem });
    // A negative invoice as a credit note: the same record read with its amounts' signs turned.
    const credit = stream.negativeIsCreditNote && view.get('totalAmount').startsWith('-');
    const kind = credit ? 'creditNotes' : stream.kind;
    const built = RECORD_BUILDERS[kind](credit ? negatedAmounts(view) : view);
    issues.push(
      ...built.issues.map((i) => ({
        column: i.column === '' ? '' : columns.label(i.column),
        // A required column the configuration does not place: say where to place it.
        reason:
          i.column !== '' && columns.unnamed(i.column) && i.reason === 'required value is empty'
            ? `required value is empty: the record has no "${i.column}" field; name the field that holds it in streams.${streamName}.columns.${i.column}`
            : i.reason,
      })),
    );
    if (built.record === null || issues.length > 0) {
      this.stats.rejected++;
      const sourceId = view.get('sourceId');
      yield {
        seq,
        rejected: {
          kind: KIND_OF_STREAM[kind],
          sourceKey: sourceId !== '' ? sourceId : `${streamName}:line ${line}`,
          file: origin.file!,
          line,
          reason: issues.map((i) => (i.column === '' ? i.reason : `${i.column}: ${i.reason}`)).join('; '),
          ...(issues.some((i) => i.column !== '')
            ? {
                column: issues
                  .filter((i) => i.column !== '')
                  .map((i) => i.column)
                  .join('; '),
              }
            : {}),
          raw: rawOf(record),
        },
      };
      return;
    }
    this.stats.records++;
    const item: Item = { seq, record: { record: built.record, origin } };
    if (built.record.kind === 'account') {
      this.#seenAccounts.add(built.record.sourceId);
      yield item;
      // Its documents that came first go right after it (the engine syncs a batch's accounts first).
      const waiting = this.#held.get(built.record.sourceId);
      if (waiting) {
        this.#held.delete(built.record.sourceId);
        this.#heldCount -= waiting.length;
        yield* waiting;
      }
      return;
    }
    const account = built.record.accountSourceId;
    if (!this.#accountsComing || this.#seenAccounts.has(account)) {
      yield item;
      return;
    }
    // Its account may still come in this run: it waits (bounded; past the bound the oldest go on).
    const list = this.#held.get(account);
    if (list) list.push(item);
    else this.#held.set(account, [item]);
    this.#heldCount++;
    this.stats.held++;
    this.stats.mostHeld = Math.max(this.stats.mostHeld, this.#heldCount);
    if (this.#heldCount > this.#props.settings.maxHeldDocuments) yield* this.#releaseOldestHeld();
  }

  /** A stream's `skip` rules, compiled once. */
  #skipRules(
    name: string,
    stream: SingerStreamSettings,
  ): ReadonlyArray<{ column: string; hits(text: string): boolean }> {
    let rules = this.#compiledSkips.get(name);
    if (rules === undefined) {
      rules = stream.skip.map((rule) => {
        if (rule.equals !== undefined) {
          const equals = rule.equals.trim().toLowerCase();
          return { column: rule.column, hits: (text: string) => text.toLowerCase() === equals };
        }
        if (rule.empty) return { column: rule.column, hits: (text: string) => text === '' };
        const pattern = new RegExp(rule.matches!, 'iu');
        return { column: rule.column, hits: (text: string) => pattern.test(text) };
      });
      this.#compiledSkips.set(name, rules);
    }
    return rules;
  }

  *#releaseOldestHeld(): Generator<Item> {
    let oldest: [string, Item[]] | null = null;
    for (const entry of this.#held)
      if (oldest === null || entry[1][0]!.seq < oldest[1][0]!.seq) oldest = entry;
    if (oldest === null) return;
    this.#held.delete(oldest[0]);
    this.#heldCount -= oldest[1].length;
    yield* oldest[1];
  }

  #releaseAllHeld(): Item[] {
    const all = [...this.#held.values()].flat().sort((a, b) => a.seq - b.seq);
    this.#held.clear();
    this.#heldCount = 0;
    return all;
  }

  /** The lowest record not processed yet: a STATE before it is reached. */
  #frontier(): number {
    let low = this.#outstanding[0] ?? this.#nextSeq;
    if (this.#filling !== null) low = Math.min(low, this.#filling);
    for (const items of this.#held.values()) low = Math.min(low, items[0]!.seq);
    return low;
  }

  /** A batch was processed (its failures are in the state DB): the STATEs it completes are reached. */
  async failed(): Promise<void> {
    this.#outstanding.shift();
    await this.#reach(this.#frontier());
  }

  async #reach(frontier: number): Promise<void> {
    let reached: { value: unknown } | null = null;
    while (this.#states.length > 0 && this.#states[0]!.before <= frontier)
      reached = { value: this.#states.shift()!.value };
    if (reached === null) return;
    this.#reachedState = reached;
    await this.#props.onState?.(reached.value);
  }

  async complete(): Promise<void> {
    if (this.#state !== 'drained') throw new Error(`${this.name}: complete() before batches() was drained`);
    this.#state = 'settled';
    await this.#reach(Number.POSITIVE_INFINITY);
    if (this.#lastState === null) return;
    await this.#props.storeState(this.#lastState.value);
    this.#log.info({ states: this.stats.states }, 'tap state stored as the cursor');
  }

  /** The last STATE reached, if any (the target's last line on stdout). */
  get reachedState(): { value: unknown } | null {
    return this.#reachedState;
  }

  async abandon(reason: string): Promise<void> {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    await this.#props.input.stop();
    this.#log.warn({ reason }, 'tap run abandoned, cursor left as it was');
  }

  async release(): Promise<void> {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    await this.#props.input.stop();
  }
}

/** A view whose amounts have their sign turned (`-297.50` -> `297.50`, `0` stays). */
function negatedAmounts(view: RowView): RowView {
  return {
    ...view,
    get(column) {
      const text = view.get(column);
      if (column !== 'totalAmount' && column !== 'taxAmount') return text;
      if (text.startsWith('-')) return text.slice(1);
      return /^[+]?[0.]*$/.test(text) ? text : `-${text}`;
    },
  };
}

function toBatch(items: readonly Item[]): SourceBatch {
  const batch: SourceBatch = { records: [], rejected: [] };
  for (const item of items) {
    if (item.record) batch.records.push(item.record);
    else if (item.rejected) batch.rejected.push(item.rejected);
  }
  return batch;
}

/** A record's top-level fields as text, kept with a failure. */
function rawOf(record: JsonObject): Record<string, string> {
  const raw: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    raw[key] =
      value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  }
  return raw;
}
