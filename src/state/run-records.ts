import { sql } from 'kysely';
import type { RecordKind } from '../domain/records.js';
import type { RunStatus } from '../domain/sync-state.js';
import type { StateDb } from './database.js';
import { type StateScopes, sourceInScope, UNSTAMPED_SCOPES } from './scopes.js';
import { StateCalls } from './state-calls.js';

/** What a run did to one record, as the `run_records` table keeps it. */
export interface TouchedRecordInput {
  kind: RecordKind;
  sourceKey: string;
  outcome: 'created' | 'updated' | 'failed';
}

export interface RunRecordRow extends TouchedRecordInput {
  id: string;
  runId: string;
  apiId: string | null;
  at: Date;
}

/** A run that touched a record (the record search lists them). */
export interface RecordRunRow {
  runId: string;
  outcome: TouchedRecordInput['outcome'];
  apiId: string | null;
  at: Date;
  trigger: string;
  status: RunStatus;
  startedAt: Date;
  /** The run's connection and organization (see `state/scopes.ts`). */
  connectionId: string;
  organizationId: string;
}

/** Rows of one statement: three arrays of this many values, whatever Postgres' parameter limit. */
const CHUNK = 5_000;

/**
 * The records each run created, updated or failed (`run_records`). A batch of the engine is one
 * `insert … select` over three arrays (its kinds, keys and outcomes), with the API id the record
 * map holds for each record once the batch is over: a batch costs one statement whatever its
 * size, and a pass that changes nothing writes nothing. The API ids are those of the source's scope
 * (see `state/scopes.ts`).
 *
 * What a lost connection does to each statement (see `StateCalls`): the reads are `retried`;
 * `record` runs `once`, its rows taking new ids: an attempt again after one that took effect would
 * list the batch's records twice in the run (and count them twice for a run without counts).
 */
export class RunRecordsRepository {
  /** `calls`: how statements run (default `StateCalls.direct`; `syncStateRepos` passes the retrying ones). */
  constructor(
    private readonly db: StateDb,
    private readonly scopes: StateScopes = UNSTAMPED_SCOPES,
    private readonly calls: StateCalls = StateCalls.direct,
  ) {}

  async record(runId: string, sourceId: string, records: readonly TouchedRecordInput[]): Promise<void> {
    for (let i = 0; i < records.length; i += CHUNK) {
      const chunk = records.slice(i, i + CHUNK);
      // The API id is looked up key by key (a subquery per row, on the record map's primary key),
      // not joined: while a first sync grows the record map, its statistics lag behind and can say
      // the source holds one row, and the planner then joined the batch by comparing each of its
      // keys with every row of the source (issue 30: 500 × n comparisons a batch, the pass's cost
      // growing with the square of its records). A lookup per key costs the same at any size.
      await this.calls.once('runRecords.record', () =>
        sql`insert into run_records (run_id, kind, source_key, outcome, api_id)
          select ${runId}::bigint, r.kind, r.source_key, r.outcome,
            (select m.api_id from record_map m
              where ${sourceInScope(this.scopes, sourceId, 'm')} and m.kind = r.kind and m.source_key = r.source_key)
          from unnest(${chunk.map((r) => r.kind)}::text[], ${chunk.map((r) => r.sourceKey)}::text[],
                      ${chunk.map((r) => r.outcome)}::text[]) with ordinality as r(kind, source_key, outcome, n)
          order by r.n`.execute(this.db),
      );
    }
  }

  /** The records of a run in the order they were written: a page of them, and how many in all. */
  async ofRun(
    runId: string,
    page: { offset: number; limit: number; outcome?: TouchedRecordInput['outcome'] | undefined },
  ): Promise<{ rows: RunRecordRow[]; total: number }> {
    let query = this.db.selectFrom('run_records').where('run_id', '=', runId);
    if (page.outcome) query = query.where('outcome', '=', page.outcome);
    const [rows, count] = await Promise.all([
      this.calls.retried('runRecords.ofRun', () =>
        query.selectAll().orderBy('id').offset(page.offset).limit(page.limit).execute(),
      ),
      this.calls.retried('runRecords.countOfRun', () =>
        query.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirst(),
      ),
    ]);
    return {
      rows: rows.map((r) => ({
        id: String(r.id),
        runId: String(r.run_id),
        kind: r.kind,
        sourceKey: r.source_key,
        outcome: r.outcome,
        apiId: r.api_id,
        at: r.at,
      })),
      total: Number(count?.n ?? 0),
    };
  }

  /**
   * How many records of each kind the run created, updated and failed, from its rows here: the
   * counts of a run that never wrote its own (its process killed, or still running).
   */
  async countsOfRun(
    runId: string,
  ): Promise<Array<{ kind: RecordKind; outcome: TouchedRecordInput['outcome']; n: number }>> {
    const rows = await this.calls.retried('runRecords.countsOfRun', () =>
      this.db
        .selectFrom('run_records')
        .select(['kind', 'outcome', (eb) => eb.fn.countAll<string>().as('n')])
        .where('run_id', '=', runId)
        .groupBy(['kind', 'outcome'])
        .execute(),
    );
    return rows.map((r) => ({ kind: r.kind, outcome: r.outcome, n: Number(r.n) }));
  }

  /** The runs of the source that touched this record, latest first. */
  async runsOf(sourceId: string, kind: RecordKind, sourceKey: string, limit = 50): Promise<RecordRunRow[]> {
    const rows = await this.calls.retried('runRecords.runsOf', () =>
      this.db
        .selectFrom('run_records as rr')
        .innerJoin('runs', 'runs.id', 'rr.run_id')
        .select([
          'rr.run_id',
          'rr.outcome',
          'rr.api_id',
          'rr.at',
          'runs.trigger',
          'runs.status',
          'runs.started_at',
          'runs.connection_id',
          'runs.organization_id',
        ])
        .where('rr.source_key', '=', sourceKey)
        .where('rr.kind', '=', kind)
        .where('runs.source_id', '=', sourceId)
        .orderBy('rr.run_id', 'desc')
        .orderBy('rr.id', 'desc')
        .limit(limit)
        .execute(),
    );
    return rows.map((r) => ({
      runId: String(r.run_id),
      outcome: r.outcome,
      apiId: r.api_id,
      at: r.at,
      trigger: r.trigger,
      status: r.status,
      startedAt: r.started_at,
      connectionId: r.connection_id,
      organizationId: r.organization_id,
    }));
  }
}
