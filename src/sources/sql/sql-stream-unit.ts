import type { Clock } from '../../domain/clock.js';
import { messageOf } from '../../domain/errors.js';
import type { Stream } from '../../domain/records.js';
import type { Logger } from '../../logging/logger.js';
import { textOf } from '../../records/typed-values.js';
import type { CursorStore } from '../ports.js';
import type { SourceBatch, SourceUnit } from '../source.js';
import { SqlSourceError } from './errors.js';
import {
  type CursorKey,
  type KeysetSyntax,
  type PagePosition,
  pageQuery,
  probeStatement,
  type SqlStatement,
} from './keyset-query.js';
import { convertRow, resolveColumns, type StreamColumns } from './row-records.js';
import { isTruthyFlag } from './row-values.js';
import { SqlReadError, type SqlResult, type SqlSession } from './sql-dialect.js';
import type { StreamSettings } from './sql-settings.js';
import { keysetState, storedKey } from './stream-cursor.js';

/** What one pass over a stream did: the figures `status`, logs and tests rely on. */
export interface StreamPassStats {
  stream: Stream;
  /** Where reading began: the stream's start, the look-back before the cursor, or right after it. */
  start: PagePosition['kind'];
  /** The stored cursor the pass started from (null: none, or a full refresh). */
  from: CursorKey | null;
  /** Every row the queries returned, look-back re-reads included. */
  rowsRead: number;
  pages: number;
  records: number;
  rejected: number;
  /** Account tombstones handed to the engine (unlink or tag). */
  tombstones: number;
  /** Tombstones not acted on (documents, or accounts with `onDelete: skip`). */
  tombstonesSkipped: number;
  /** The most rows one page held: at most the batch size. */
  largestPage: number;
  /** The greatest key read; the new cursor once the unit completes. */
  to: CursorKey | null;
  state: 'reading' | 'drained' | 'completed' | 'abandoned' | 'released';
  durationMs: number;
}

export interface SqlStreamUnitProps {
  sourceId: string;
  stream: Stream;
  settings: StreamSettings;
  lookbackSeconds: number;
  fullRefresh: boolean;
  /** For the timeout's message: the session applies it. */
  statementTimeoutMs: number;
  batchSize: number;
  /** The pass's dedicated connection (one per pass, shared by its units one after the other). */
  session: SqlSession;
  /** How the session's database spells a keyset page. */
  keyset: KeysetSyntax;
  /** Where zone-less timestamps are (the source's `timeZone`). */
  timeZone: string;
  cursors: CursorStore;
  filesRealPath: string | null;
  clock: Clock;
  logger: Logger;
}

/**
 * One stream of a SQL source since its cursor, as a unit of work. `batches()` reads keyset pages, each
 * in its own short read-only transaction with a statement timeout (`SqlSession.read`): the engine
 * may take hours to sync a large stream through the API's rate limit, and a transaction held open
 * that long would pin the billing database's old row versions. The keyset needs no snapshot to be
 * exact, and the look-back covers rows committed behind the cursor. `complete` stores the greatest
 * key read; `abandon` and `release` leave the cursor as it was.
 */
export class SqlStreamUnit implements SourceUnit {
  readonly name: string;
  readonly stream: Stream;
  readonly stats: StreamPassStats;
  readonly #props: SqlStreamUnitProps;
  readonly #log: Logger;
  #state: 'new' | 'reading' | 'drained' | 'settled' = 'new';

  constructor(props: SqlStreamUnitProps) {
    this.#props = props;
    this.name = `${props.sourceId}/${props.stream}`;
    this.stream = props.stream;
    this.#log = props.logger.child({ stream: props.stream });
    this.stats = {
      stream: props.stream,
      start: 'start',
      from: null,
      rowsRead: 0,
      pages: 0,
      records: 0,
      rejected: 0,
      tombstones: 0,
      tombstonesSkipped: 0,
      largestPage: 0,
      to: null,
      state: 'reading',
      durationMs: 0,
    };
  }

  async *batches(): AsyncGenerator<SourceBatch> {
    if (this.#state !== 'new')
      throw new SqlSourceError('SQL_UNIT_MISUSED', `${this.name}: batches() read twice`);
    this.#state = 'reading';
    const started = this.#props.clock.now().getTime();
    const { settings, batchSize, stream } = this.#props;
    let position = await this.#firstPosition();
    this.stats.start = position.kind;
    const columns = await this.#columns();
    for (;;) {
      const result = await this.#page(position);
      const batch: SourceBatch = { records: [], rejected: [] };
      const { filesRealPath, timeZone } = this.#props;
      const converter = { stream, settings, columns, filesRealPath, timeZone };
      for (const row of result.rows) {
        const converted = await convertRow(converter, row);
        if (converted.type === 'record') {
          batch.records.push({ record: converted.record, origin: converted.origin });
          if (columns.deleted !== null && isTruthyFlag(row[columns.deleted])) this.stats.tombstones++;
        } else if (converted.type === 'rejected') batch.rejected.push(converted.problem);
        else {
          this.stats.tombstonesSkipped++;
          this.#log.debug({ sourceKey: converted.sourceKey }, 'tombstone skipped');
        }
      }
      const last = result.rows[result.rows.length - 1];
      this.stats.pages++;
      this.stats.rowsRead += result.rows.length;
      this.stats.records += batch.records.length;
      this.stats.rejected += batch.rejected.length;
      this.stats.largestPage = Math.max(this.stats.largestPage, result.rows.length);
      if (last !== undefined) this.stats.to = [textOf(last[columns.ts], ''), textOf(last[columns.id], '')];
      this.stats.durationMs = this.#props.clock.now().getTime() - started;
      if (batch.records.length + batch.rejected.length > 0) yield batch;
      if (result.rows.length < batchSize || this.stats.to === null) break;
      position = { kind: 'after', key: this.stats.to };
    }
    this.#state = 'drained';
    this.stats.state = 'drained';
    const { rowsRead, pages, tombstonesSkipped, rejected, from, to, durationMs } = this.stats;
    this.#log.info({ rowsRead, pages, rejected, tombstonesSkipped, from, to, durationMs }, 'stream read');
  }

  /** Failed rows change nothing here: they are in the state DB, and the cursor passes them. */
  async failed(): Promise<void> {}

  async complete(): Promise<void> {
    if (this.#state !== 'drained') {
      throw new SqlSourceError('SQL_UNIT_MISUSED', `${this.name}: complete() before batches() was drained`);
    }
    this.#state = 'settled';
    this.stats.state = 'completed';
    const { to } = this.stats;
    // No row read: the cursor stays (a look-back pass that found nothing must not move it back).
    if (to === null) return;
    const { cursors, sourceId, stream, settings } = this.#props;
    await cursors.set(sourceId, stream, keysetState(settings.cursorColumns, to));
    this.#log.info({ cursor: to }, 'cursor advanced');
  }

  async abandon(reason: string): Promise<void> {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    this.stats.state = 'abandoned';
    this.#log.warn({ reason, cursor: this.stats.from }, 'stream abandoned, cursor left as it was');
  }

  async release(): Promise<void> {
    if (this.#state === 'settled') return;
    this.#state = 'settled';
    this.stats.state = 'released';
  }

  async #firstPosition(): Promise<PagePosition> {
    const { cursors, sourceId, stream, settings, fullRefresh, lookbackSeconds } = this.#props;
    if (fullRefresh) return { kind: 'start' };
    const stored = storedKey(await cursors.get(sourceId, stream), settings.cursorColumns);
    if (stored.kind === 'none') return { kind: 'start' };
    if (stored.kind === 'other-columns') {
      this.#log.warn(
        { storedColumns: stored.columns, cursorColumns: settings.cursorColumns },
        'the stored cursor is of other cursor columns: reading the stream from its start',
      );
      return { kind: 'start' };
    }
    this.stats.from = stored.key;
    return lookbackSeconds > 0
      ? { kind: 'since', ts: stored.key[0], lookbackSeconds }
      : { kind: 'after', key: stored.key };
  }

  /**
   * The query's columns, checked before any row is read (`limit 0`: planned, not run), so a missing
   * column is named plainly rather than as the keyset's `column q.updated_at does not exist`.
   */
  async #columns(): Promise<StreamColumns> {
    const { settings } = this.#props;
    const probe = await this.#read(probeStatement(settings.query));
    const resolution = resolveColumns(
      this.stream,
      probe.fields.map((f) => f.name),
      settings,
    );
    if (!resolution.ok) throw new SqlSourceError('SQL_COLUMNS_MISSING', `${this.name}: ${resolution.reason}`);
    if (resolution.columns.unknown.length > 0) {
      this.#log.debug({ columns: resolution.columns.unknown }, 'columns not in the contract ignored');
    }
    return resolution.columns;
  }

  /** One keyset page. */
  #page(position: PagePosition): Promise<SqlResult> {
    const { settings, batchSize, keyset } = this.#props;
    return this.#read(pageQuery(keyset, settings.query, settings.cursorColumns, position, batchSize));
  }

  /** Runs a statement in its own short read-only transaction with the statement timeout. */
  async #read(statement: SqlStatement): Promise<SqlResult> {
    try {
      return await this.#props.session.read(statement);
    } catch (error) {
      if (error instanceof SqlReadError && error.timedOut) {
        throw new SqlSourceError(
          'SQL_STATEMENT_TIMEOUT',
          `${this.name}: the query ran longer than statementTimeoutMs (${this.#props.statementTimeoutMs} ms); ` +
            'index the cursor columns or raise the timeout',
          { cause: error },
        );
      }
      throw new SqlSourceError('SQL_QUERY_FAILED', `${this.name}: the query failed: ${messageOf(error)}`, {
        cause: error,
      });
    }
  }
}
