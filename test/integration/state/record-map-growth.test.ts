import { CompiledQuery, type KyselyPlugin, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StateDatabase } from '../../../src/state/database.js';
import { RecordMapRepository } from '../../../src/state/record-map.js';
import { RunRecordsRepository } from '../../../src/state/run-records.js';
import { RunsRepository } from '../../../src/state/runs.js';
import { openStateOfKind } from '../../support/postgres.js';

/** A plan node of `explain (format json)`, as far as these tests read it. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  'Plan Rows': number;
  Plans?: PlanNode[];
}

/** The queries run through the returned plugin, compiled as they were sent. */
function capturing(state: StateDatabase): { plugin: KyselyPlugin; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: ({ node, queryId }) => {
      queries.push(state.db.getExecutor().compileQuery(node, queryId));
      return node;
    },
    transformResult: async ({ result }) => result,
  };
  return { plugin, queries };
}

/** The plan of a query (not run). */
async function planOf(state: StateDatabase, query: CompiledQuery): Promise<PlanNode> {
  const { rows } = await state.db.executeQuery<{ 'QUERY PLAN': unknown }>(
    CompiledQuery.raw(`explain (format json) ${query.sql}`, [...query.parameters]),
  );
  const json = rows[0]!['QUERY PLAN'];
  return ((typeof json === 'string' ? JSON.parse(json) : json) as [{ Plan: PlanNode }])[0].Plan;
}

/** The nodes of the query's plan (not run) that read `record_map`. */
async function recordMapReads(state: StateDatabase, query: CompiledQuery): Promise<PlanNode[]> {
  const Plan = await planOf(state, query);
  const reads: PlanNode[] = [];
  const walk = (node: PlanNode) => {
    if (node['Relation Name'] === 'record_map') reads.push(node);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(Plan);
  return reads;
}

/** Whether a plan node finds the rows it reads by their key in an index (not by reading a range). */
const readsByKey = (node: PlanNode) =>
  (/^Index (Only )?Scan$/.test(node['Node Type']) && (node['Index Cond'] ?? '').includes('source_key')) ||
  (node['Node Type'] === 'Bitmap Heap Scan' && (node['Recheck Cond'] ?? '').includes('source_key'));

/** The rows the planner expects a source's invoices to be. */
async function estimatedInvoices(state: StateDatabase, sourceId: string): Promise<number> {
  const query = sql`select 1 from record_map where source_id = ${sourceId} and connection_id = 'default'
    and organization_id = '' and kind = 'invoice'`.compile(state.db);
  return (await planOf(state, query))['Plan Rows'];
}

/** The record map's row count as the planner's statistics hold it (-1 or 0: never counted). */
async function rowsInStatistics(state: StateDatabase): Promise<number> {
  const { rows } = await sql<{
    reltuples: number;
  }>`select reltuples from pg_class where oid = 'record_map'::regclass`.execute(state.db);
  return Number(rows[0]!.reltuples);
}

/**
 * A first sync grows a source's record map rows from nothing within one pass (issue 30): the
 * queries each batch makes of them must find its keys in the primary key whatever the planner's
 * statistics say, and the statistics must follow the source as it grows.
 */
describe.each(['postgres', 'embedded'] as const)('the record map as a first sync grows it, %s', (kind) => {
  let state: StateDatabase;
  beforeEach(async () => {
    state = await openStateOfKind(kind, 'record_map_growth');
  }, 60_000);
  afterEach(() => state?.close());

  it('when no statistics know the source, then a batch of run records finds each API id by the primary key, not by reading the source', async () => {
    // 2,000 records of the source, written in one statement: nothing has analyzed the table since.
    await sql`insert into record_map (source_id, kind, source_key, api_id, content_hash)
      select 'erp', 'invoice', 'I-' || n, 'doc_' || n, 'h' || n from generate_series(1, 2000) as n`.execute(
      state.db,
    );
    expect(await rowsInStatistics(state)).toBeLessThan(2000);
    const runId = await new RunsRepository(state.db).start('erp', 'once', false);
    const { plugin, queries } = capturing(state);
    const batch = Array.from({ length: 500 }, (_, i) => ({
      kind: 'invoice' as const,
      sourceKey: `I-${1501 + i}`,
      outcome: 'created' as const,
    }));
    await new RunRecordsRepository(state.db.withPlugin(plugin)).record(runId, 'erp', batch);

    const insert = queries.find((q) => q.sql.trimStart().startsWith('insert into run_records'));
    const reads = await recordMapReads(state, insert!);
    expect(reads.length).toBeGreaterThan(0);
    // Before: the source's rows read once, kept, and compared with each key of the batch.
    for (const read of reads) expect(readsByKey(read), JSON.stringify(read)).toBe(true);
    const { rows } = await sql<{
      api_id: string | null;
    }>`select api_id from run_records where run_id = ${runId} order by id limit 2`.execute(state.db);
    expect(rows.map((r) => r.api_id)).toEqual(['doc_1501', 'doc_1502']);
  });

  it("when a source's records are saved one by one, then the planner's statistics know them from 1,000 on, refreshed each time they double", async () => {
    const map = new RecordMapRepository(state.db);
    const save = (i: number) =>
      map.save(
        'erp',
        'invoice',
        { sourceKey: `I-${i}`, apiId: `doc_${i}`, contentHash: `h${i}`, syncedState: {} },
        null,
      );
    for (let i = 1; i < 1000; i++) await save(i);
    expect(await rowsInStatistics(state)).toBeLessThan(999);
    await save(1000);
    expect(await rowsInStatistics(state)).toBe(1000);
    for (let i = 1001; i < 2000; i++) await save(i);
    expect(await rowsInStatistics(state)).toBe(1000);
    await save(2000);
    expect(await rowsInStatistics(state)).toBe(2000);
    // Before: the source's rows were expected to be 1 until the pass's end, so every query of a
    // batch read them all. Now the estimate is the source's size.
    const estimate = await estimatedInvoices(state, 'erp');
    expect(estimate).toBeGreaterThanOrEqual(1000);
    expect(estimate).toBeLessThanOrEqual(4000);
  }, 60_000);
});
