import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CsvParseFailure,
  type CsvRow,
  MAX_RECORD_CHARS,
  READ_CHUNK,
  type ReadOptions,
  readCsvRows,
} from '../../../src/sources/csv/csv-rows.js';

/**
 * A record over `MAX_RECORD_CHARS` (a 2 MiB cell: a pasted document, a log) in the middle of a file:
 * csv-parse gives up on it, and the reader finds its end and goes on, so the rows after it are read
 * with the lines an editor shows, and the record itself is one row marked `oversized`.
 */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-oversized-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const TWO_MIB = 2 * MAX_RECORD_CHARS;

async function readAll(
  content: string | Buffer,
  options: ReadOptions = {},
): Promise<{ rows: CsvRow[]; failure: CsvParseFailure | null }> {
  const path = join(dir, `f-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(path, content);
  const rows: CsvRow[] = [];
  try {
    for await (const chunk of readCsvRows(path, options)) rows.push(...chunk);
  } catch (error) {
    if (error instanceof CsvParseFailure) return { rows, failure: error };
    throw error;
  }
  return { rows, failure: null };
}

/** Rows as [line, first field] pairs, the oversized ones marked. */
const lines = (rows: CsvRow[]) => rows.map((row) => [row.line, row.fields[0], row.oversized !== undefined]);

describe('readCsvRows past a record over 1 MiB', () => {
  it('when a quoted 2 MiB cell sits in the middle of a large file, then every row before and after is delivered with its line, and the record as one oversized row', async () => {
    // Enough rows before it that the record starts several reads into the file.
    const before = Array.from({ length: 6000 }, (_, i) => `B-${i},"v, ${i}"`);
    const after = Array.from({ length: 3000 }, (_, i) => `A-${i},"w ""${i}"""`);
    const body = ['sourceId,note', ...before, `BIG-1,"${'x'.repeat(TWO_MIB)}"`, ...after].join('\n');
    expect(Buffer.byteLength(body)).toBeGreaterThan(8 * READ_CHUNK);
    const { rows, failure } = await readAll(`${body}\n`);
    expect(failure).toBeNull();
    expect(rows).toHaveLength(1 + 6000 + 1 + 3000);
    expect(rows[6000]).toEqual({ line: 6001, fields: ['B-5999', 'v, 5999'] });
    const big = rows[6001]!;
    expect(big.line).toBe(6002);
    expect(big.fields[0]).toBe('BIG-1');
    expect(big.fields[1]).toMatch(/^x{256}…$/);
    expect(big.oversized).toEqual({
      chars: 'BIG-1'.length + TWO_MIB,
      longest: { index: 1, chars: TWO_MIB },
      cut: [1],
    });
    expect(rows[6002]).toEqual({ line: 6003, fields: ['A-0', 'w "0"'] });
    expect(rows.at(-1)).toEqual({ line: 9002, fields: ['A-2999', 'w "2999"'] });
  });

  it('when the 2 MiB cell holds line breaks (CRLF, LF, lone CR) and blank lines come before it, then the rows after it keep their physical lines', async () => {
    const cell = `${'y'.repeat(MAX_RECORD_CHARS)}\r\nsecond\nthird\rfourth ""quoted""${'z'.repeat(MAX_RECORD_CHARS)}`;
    const content = ['a,b', '1,2', '', '', `3,"${cell}"`, '4,"multi\r\nline"', '5,6', ''].join('\r\n');
    const { rows, failure } = await readAll(content);
    expect(failure).toBeNull();
    expect(lines(rows)).toEqual([
      [1, 'a', false],
      [2, '1', false],
      [5, '3', true],
      // The cell spans lines 5 to 8: the next record starts on line 9.
      [9, '4', false],
      [11, '5', false],
    ]);
    expect(rows[3]?.fields).toEqual(['4', 'multi\r\nline']);
    expect(rows[2]?.oversized?.longest).toEqual({ index: 1, chars: cell.length - 2 });
  });

  it('when the 2 MiB cell is unquoted, or the last record without a line break, then it is one oversized row and nothing else is lost', async () => {
    const unquoted = await readAll(`a,b\n1,2\n3,${'u'.repeat(TWO_MIB)}\n4,5\n`);
    expect(unquoted.failure).toBeNull();
    expect(lines(unquoted.rows)).toEqual([
      [1, 'a', false],
      [2, '1', false],
      [3, '3', true],
      [4, '4', false],
    ]);
    const last = await readAll(`a,b\n1,2\n3,"${'l'.repeat(TWO_MIB)}"`);
    expect(last.failure).toBeNull();
    expect(lines(last.rows)).toEqual([
      [1, 'a', false],
      [2, '1', false],
      [3, '3', true],
    ]);
  });

  it('when two records are over the limit, the first one right after a BOM, then both are oversized rows and the rows between and after are read', async () => {
    const content = `\uFEFF"${'h'.repeat(TWO_MIB)}",b\n1,2\n"${'i'.repeat(TWO_MIB)}\n",x\n3,4\n`;
    const { rows, failure } = await readAll(content);
    expect(failure).toBeNull();
    expect(lines(rows).map(([line, , oversized]) => [line, oversized])).toEqual([
      [1, true],
      [2, false],
      [3, true],
      [5, false],
    ]);
    // The BOM is not part of the first field, cut or not.
    expect(rows[0]?.fields[0]?.startsWith('hhh')).toBe(true);
    expect(rows[3]?.fields).toEqual(['3', '4']);
  });

  it('when a windows-1252 file separated by ";" holds the 2 MiB cell, then it is read again from the start and the rows after it are read', async () => {
    const text = `Kunde;Notiz\nK-1;Café\nK-2;"${'€'.repeat(TWO_MIB)}"\nK-3;Straße\n`;
    const { rows, failure } = await readAll(Buffer.from(text.replaceAll('€', '\x80'), 'latin1'), {
      encoding: 'windows-1252',
      delimiter: ';',
    });
    expect(failure).toBeNull();
    expect(rows.map((row) => [row.line, row.oversized === undefined ? row.fields : row.fields[0]])).toEqual([
      [1, ['Kunde', 'Notiz']],
      [2, ['K-1', 'Café']],
      [3, 'K-2'],
      [4, ['K-3', 'Straße']],
    ]);
    // Characters, not bytes: each € is three bytes of UTF-8.
    expect(rows[2]?.oversized?.longest.chars).toBe(TWO_MIB);
    expect(rows[2]?.fields[1]).toMatch(/^€+…$/);
  });

  it('when the oversized record never ends (a quote left open) or its quoting is broken, then reading stops at its line as before', async () => {
    const open = await readAll(`a,b\n1,2\n3,"${'o'.repeat(TWO_MIB)}\n4,5\n`);
    expect(lines(open.rows)).toEqual([
      [1, 'a', false],
      [2, '1', false],
    ]);
    expect(open.failure?.line).toBe(3);
    expect(open.failure?.csvCode).toBe('CSV_MAX_RECORD_SIZE');
    const broken = await readAll(`a,b\n1,2\n\n3,"${'b'.repeat(TWO_MIB)}"oops\n4,5\n`);
    expect(broken.rows).toHaveLength(2);
    expect(broken.failure?.line).toBe(4);
  });
});
