import { realpath } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { RecordOrigin, RowProblem, SourceRecord, Stream } from '../../domain/records.js';
import { KIND_OF_STREAM } from '../../records/columns.js';
import { resolvePdf } from '../../records/pdf-file.js';
import { RECORD_BUILDERS, type RowIssue } from '../../records/record-builders.js';
import { minimalTombstone } from '../../records/tombstone.js';
import { rowViewOf, textOf } from '../../records/typed-values.js';
import type { SourceBatch } from '../source.js';
import { ModuleSourceError } from './errors.js';

/**
 * Checks what a module yields exactly as CSV rows are checked (the same validators, the same
 * reasons), so a module cannot hand the engine a record the contract would refuse: a wrong kind, a
 * missing required field, a float amount, an impossible date. Refused records become row problems
 * (recorded as failures), the rest typed records. A batch that is not `{ records: [...] }` is a bug
 * of the module: the unit fails with a message saying what was expected.
 */
export interface BatchCheckContext {
  stream: Stream;
  unitName: string;
  moduleDir: string;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export async function checkModuleBatch(ctx: BatchCheckContext, batch: unknown): Promise<SourceBatch> {
  if (!isObject(batch) || !Array.isArray(batch.records)) {
    throw new ModuleSourceError(
      'MODULE_UNIT_INVALID',
      `${ctx.unitName}: a batch must be an object { records: [...], rejected?: [...] }, got ${describe(batch)}`,
    );
  }
  const out: SourceBatch = { records: [], rejected: [] };
  for (const [index, item] of batch.records.entries()) {
    const wrapped = isObject(item) && isObject(item.record);
    const record = wrapped ? (item.record as Record<string, unknown>) : item;
    const origin = originOf(wrapped ? item.origin : undefined, ctx.unitName);
    const checked = await checkRecord(ctx, record, origin, index);
    if ('problem' in checked) out.rejected.push(checked.problem);
    else out.records.push(checked);
  }
  const rejected = Array.isArray(batch.rejected) ? batch.rejected : [];
  for (const [index, problem] of rejected.entries()) out.rejected.push(problemOf(ctx, problem, index));
  return out;
}

async function checkRecord(
  ctx: BatchCheckContext,
  record: unknown,
  origin: RecordOrigin,
  index: number,
): Promise<{ record: SourceRecord; origin: RecordOrigin } | { problem: RowProblem }> {
  const kind = KIND_OF_STREAM[ctx.stream];
  const fallbackKey = `${ctx.unitName}#${index + 1}`;
  if (!isObject(record))
    return {
      problem: refused(kind, fallbackKey, origin, `a record must be an object, got ${describe(record)}`),
    };
  const view = rowViewOf((column) => fieldOf(record, column));
  const sourceId = view.get('sourceId');
  const key = sourceId !== '' ? sourceId : fallbackKey;
  if (record.kind !== undefined && record.kind !== kind) {
    return {
      problem: refused(
        kind,
        key,
        origin,
        `a record of kind "${String(record.kind)}" in the ${ctx.stream} stream`,
        record,
      ),
    };
  }
  const built = RECORD_BUILDERS[ctx.stream](view);
  const issues: RowIssue[] = [...built.issues];
  const deleted = ctx.stream === 'accounts' && record.deleted === true;
  if (deleted && sourceId !== '') {
    const tombstone =
      built.record?.kind === 'account'
        ? { ...built.record, deleted: true }
        : minimalTombstone(sourceId, view.get);
    return { record: tombstone, origin };
  }
  let file: string | null = null;
  const fileText = ctx.stream === 'accounts' ? '' : view.get('file');
  if (fileText !== '') {
    const absolute = resolve(ctx.moduleDir, fileText);
    const pdf = await resolvePdf(
      await realpath(dirname(absolute)).catch(() => dirname(absolute)),
      basename(absolute),
    );
    if (pdf.ok) file = pdf.value;
    else
      issues.push({ column: 'file', reason: pdf.reason.replace(`"${basename(absolute)}"`, `"${fileText}"`) });
  }
  if (built.record === null || issues.length > 0) {
    const reason = issues
      .map((i) => (issues.length === 1 || i.column === '' ? i.reason : `${i.column}: ${i.reason}`))
      .join('; ');
    const problem = refused(kind, key, origin, reason, record);
    const columns = issues.map((i) => i.column).filter((c) => c !== '');
    if (columns.length > 0) problem.column = columns.join('; ');
    return { problem };
  }
  return { record: built.record.kind === 'account' ? built.record : { ...built.record, file }, origin };
}

/** `billingAddress.city` is read from a nested `billingAddress` object or from a flat key. */
function fieldOf(record: Record<string, unknown>, column: string): unknown {
  if (column.startsWith('billingAddress.')) {
    const address = record.billingAddress;
    const nested = isObject(address) ? address[column.slice('billingAddress.'.length)] : undefined;
    return nested ?? record[column];
  }
  return record[column];
}

function refused(
  kind: RowProblem['kind'],
  sourceKey: string,
  origin: RecordOrigin,
  reason: string,
  record?: Record<string, unknown>,
): RowProblem {
  const problem: RowProblem = { kind, sourceKey, reason };
  if (origin.file !== undefined) problem.file = origin.file;
  if (origin.line !== undefined) problem.line = origin.line;
  if (record) problem.raw = Object.fromEntries(Object.entries(record).map(([k, v]) => [k, textOf(v, k)]));
  return problem;
}

function problemOf(ctx: BatchCheckContext, value: unknown, index: number): RowProblem {
  const p = isObject(value) ? value : {};
  const problem: RowProblem = {
    kind: KIND_OF_STREAM[ctx.stream],
    sourceKey:
      typeof p.sourceKey === 'string' && p.sourceKey !== ''
        ? p.sourceKey
        : `${ctx.unitName}:rejected#${index + 1}`,
    reason:
      typeof p.reason === 'string' && p.reason !== '' ? p.reason : 'refused by the module (no reason given)',
  };
  if (typeof p.file === 'string') problem.file = p.file;
  if (typeof p.line === 'number') problem.line = p.line;
  if (typeof p.column === 'string') problem.column = p.column;
  return problem;
}

function originOf(value: unknown, unitName: string): RecordOrigin {
  const origin: RecordOrigin = {};
  if (isObject(value)) {
    if (typeof value.file === 'string') origin.file = value.file;
    if (typeof value.line === 'number') origin.line = value.line;
  }
  if (origin.file === undefined) origin.file = unitName;
  return origin;
}

export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object')
    return `an object with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`;
  return `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}
