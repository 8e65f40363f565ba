import type { SingerSettings, SingerStreamSettings } from '../../config/singer-source-schema.js';
import type { RecordOrigin, RowProblem, SourceRecord, Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import type { SourceBatch, SourceUnit } from '../source.js';
import { HeldDocuments } from './held-documents.js';
import { type RecordColumns, recordColumns } from './record-columns.js';
import { SchemaCheck } from './schema-check.js';
import { type JsonObject, type MessageReader, parseMessage, type SingerMessage } from './singer-messages.js';
import { compileSkipRules, readRecord, type SkipRule } from './singer-records.js';
import { StateCheckpoints } from './state-checkpoints.js';

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
  readonly #skipRules = new Map<string, readonly SkipRule[]>();
  readonly #accountsComing: boolean;
  readonly #held: HeldDocuments<Item>;
  #nextSeq = 0;
  readonly #checkpoints = new StateCheckpoints();
  #state: 'new' | 'reading' | 'drained' | 'settled' = 'new';
  #skipped = 0;

  constructor(props: SingerUnitProps) {
    this.#props = props;
    this.name = `${props.sourceId} (${props.input.label})`;
    const kinds = Object.values(props.settings.streams).map((s) => s.kind);
    this.stream =
      (['accounts', 'invoices', 'creditNotes'] as const).find((k) => kinds.includes(k)) ?? 'invoices';
    this.#accountsComing = kinds.includes('accounts');
    this.#held = new HeldDocuments(props.settings.maxHeldDocuments);
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
      this.#checkpoints.filled(item.seq);
    };
    const handOut = (): SourceBatch => {
      const out = batch;
      batch = [];
      batchKeys = new Map();
      batchStarted = Date.now();
      this.#checkpoints.handedOut(this.#nextSeq);
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
            this.#checkpoints.noted(message.value, this.#nextSeq);
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
    for (const item of this.#held.releaseAll()) {
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
    let rules = this.#skipRules.get(streamName);
    if (rules === undefined) {
      rules = compileSkipRules(stream);
      this.#skipRules.set(streamName, rules);
    }
    for (const rule of rules) {
      if (rule.hits(columns.text(record, rule.column))) {
        this.#skipped++;
        this.stats.skipped++;
        return;
      }
    }
    const seq = this.#nextSeq++;
    const origin: RecordOrigin = { file: `${this.#props.input.label} "${streamName}"`, line };
    const read = readRecord({
      streamName,
      stream,
      columns,
      record,
      file: origin.file!,
      line,
      schemaProblem: this.#schemas.problem(streamName, record),
    });
    if ('rejected' in read) {
      this.stats.rejected++;
      yield { seq, rejected: read.rejected };
      return;
    }
    this.stats.records++;
    const item: Item = { seq, record: { record: read.record, origin } };
    if (read.record.kind === 'account') {
      yield item;
      // Its documents that came first go right after it (the engine syncs a batch's accounts first).
      yield* this.#held.accountCame(read.record.sourceId);
      return;
    }
    const account = read.record.accountSourceId;
    if (!this.#accountsComing || this.#held.hasSeen(account)) {
      yield item;
      return;
    }
    // Its account may still come in this run: it waits (bounded; past the bound the oldest go on).
    this.stats.held++;
    const released = this.#held.hold(account, item);
    this.stats.mostHeld = this.#held.mostHeld;
    yield* released;
  }

  /** A batch was processed (its failures are in the state DB): the STATEs it completes are reached. */
  async failed(): Promise<void> {
    const reached = this.#checkpoints.processed(Math.min(this.#nextSeq, this.#held.lowestSeq()));
    if (reached !== null) await this.#props.onState?.(reached.value);
  }

  async complete(): Promise<void> {
    if (this.#state !== 'drained') throw new Error(`${this.name}: complete() before batches() was drained`);
    this.#state = 'settled';
    const reached = this.#checkpoints.processedAll();
    if (reached !== null) await this.#props.onState?.(reached.value);
    const last = this.#checkpoints.last;
    if (last === null) return;
    await this.#props.storeState(last.value);
    this.#log.info({ states: this.stats.states }, 'tap state stored as the cursor');
  }

  /** The last STATE reached, if any (the target's last line on stdout). */
  get reachedState(): { value: unknown } | null {
    return this.#checkpoints.reached;
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

function toBatch(items: readonly Item[]): SourceBatch {
  const batch: SourceBatch = { records: [], rejected: [] };
  for (const item of items) {
    if (item.record) batch.records.push(item.record);
    else if (item.rejected) batch.rejected.push(item.rejected);
  }
  return batch;
}
