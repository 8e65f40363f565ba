import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_PARSE_OPTIONS, READ_CHUNK, readCsvRows } from '../../../src/sources/csv/csv-rows.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-rows-chunks-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A reproducible file of ~700 KB: a BOM, quoted fields with commas, quotes and line breaks, blank lines, accents. */
function awkwardCsv(rows: number): string {
  let state = 7;
  const next = (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  const cells = ['plain', '"a, b"', '"say ""hi"""', '"two\r\nlines"', '"three\nshort\nlines"', 'é€日本', ''];
  const lines = ['sourceId,a,b,c'];
  for (let i = 0; i < rows; i++) {
    if (next(40) === 0) lines.push('');
    const fields = [`ID-${i}`, cells[next(cells.length)]!, cells[next(cells.length)]!, 'x'.repeat(next(300))];
    lines.push(fields.join(','));
  }
  return `\uFEFF${lines.join('\r\n')}\r\n`;
}

describe('readCsvRows across read chunks', () => {
  it('when records and characters straddle the reads, then the rows are those of a one-shot parse', async () => {
    const content = awkwardCsv(4000);
    const path = join(dir, 'awkward.csv');
    await writeFile(path, content);
    const expected = parse(content, { ...CSV_PARSE_OPTIONS }) as string[][];
    const got: string[][] = [];
    for await (const rows of readCsvRows(path)) for (const row of rows) got.push(row.fields);
    expect(Buffer.byteLength(content)).toBeGreaterThan(2 * READ_CHUNK);
    expect(expected.length).toBe(4001);
    expect(got.length).toBe(4001);
    expect(got).toEqual(expected);
  });

  it('when a read ends between CR and LF or inside a doubled quote, then the rows are those of a one-shot parse', async () => {
    const chunk = READ_CHUNK;
    const head = 'sourceId,a,b,c\r\n';
    // Row 1 ends so that its CR is the last byte of the first read.
    const row1 = `ID-1,a,b,${'x'.repeat(chunk - 1 - Buffer.byteLength(head) - 'ID-1,a,b,'.length)}\r\n`;
    // Row 2 holds a quoted field whose doubled quote starts on the last byte of the second read.
    const before = `ID-2,"${'y'.repeat(chunk - 2 - 'ID-2,"'.length)}`;
    const row2 = `${before}""z",b,c\r\n`;
    const content = `${head}${row1}${row2}ID-3,a,b,c\r\n`;
    expect(content[chunk - 1]).toBe('\r');
    expect(content.slice(2 * chunk - 1, 2 * chunk + 1)).toBe('""');
    const path = join(dir, 'boundaries.csv');
    await writeFile(path, content);
    const got: string[][] = [];
    for await (const rows of readCsvRows(path)) for (const row of rows) got.push(row.fields);
    expect(got).toEqual(parse(content, { ...CSV_PARSE_OPTIONS }));
    expect(got.map((fields) => fields[0])).toEqual(['sourceId', 'ID-1', 'ID-2', 'ID-3']);
  });
});
