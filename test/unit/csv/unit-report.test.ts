import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UnitReport } from '../../../src/sources/csv/unit-report.js';
import type { DownstreamFailure } from '../../../src/sources/source.js';

const failure = (line: number | undefined, sourceKey: string): DownstreamFailure => ({
  origin: line === undefined ? { file: 'invoices.csv' } : { file: 'invoices.csv', line },
  sourceKey,
  reason: `422 for ${sourceKey}`,
});

const collect = async <T>(entries: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const entry of entries) all.push(entry);
  return all;
};

describe("UnitReport: a CSV file's refused and failed rows, spooled in line order", () => {
  const dirs: string[] = [];
  const spools = () => {
    const dir = mkdtempSync(join(tmpdir(), 'unit-report-'));
    dirs.push(dir);
    return [join(dir, 'refused.jsonl'), join(dir, 'failed.jsonl')] as const;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('when failures come batch by batch, some out of order or without a line, then they read back as one sequence in line order, lineless last', async () => {
    const [refusedPath, failedPath] = spools();
    const report = new UnitReport(refusedPath, failedPath);
    await report.failed([failure(9, 'INV-9'), failure(4, 'INV-4')]);
    // A later batch holding a line before the last one spooled (a retried record), and one with none.
    await report.failed([failure(7, 'INV-7'), failure(undefined, 'INV-X'), failure(12, 'INV-12')]);
    await report.refuse({
      line: 3,
      column: 'dueDate',
      sourceId: 'INV-3',
      reason: 'not a date',
      fields: ['x'],
    });
    await report.close();

    expect(report.anyFailed).toBe(true);
    expect((await collect(report.failedRows())).map((e) => [e.line, e.sourceId])).toEqual([
      [4, 'INV-4'],
      [7, 'INV-7'],
      [9, 'INV-9'],
      [12, 'INV-12'],
      [null, 'INV-X'],
    ]);
    expect(await collect(report.refusedRows())).toEqual([
      { line: 3, column: 'dueDate', sourceId: 'INV-3', reason: 'not a date', fields: ['x'] },
    ]);

    await report.discard();
    expect(existsSync(refusedPath)).toBe(false);
    expect(existsSync(failedPath)).toBe(false);
  });

  it('when nothing failed, then the report has no rows and writes no spool; a dry run counts without writing', async () => {
    const [refusedPath, failedPath] = spools();
    const clean = new UnitReport(refusedPath, failedPath);
    await clean.failed([]);
    await clean.close();
    expect(clean.anyFailed).toBe(false);
    expect(existsSync(refusedPath) || existsSync(failedPath)).toBe(false);

    const dryRun = new UnitReport(null, null);
    await dryRun.refuse({ line: 2, column: '', sourceId: 'A', reason: 'bad', fields: [] });
    expect(dryRun.anyFailed).toBe(true);
    expect(await collect(dryRun.refusedRows())).toEqual([]);
  });
});
