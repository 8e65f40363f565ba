import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CsvParseFailure,
  type CsvRow,
  MAX_RECORD_CHARS,
  readCsvRows,
} from '../../../src/sources/csv/csv-rows.js';
import { inspectFile } from '../../../src/sources/csv/file-inspection.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-rows-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function readAll(
  content: string | Buffer,
): Promise<{ rows: CsvRow[]; failure: CsvParseFailure | null }> {
  const path = join(dir, `f-${Math.random().toString(36).slice(2)}.csv`);
  await writeFile(path, content);
  const rows: CsvRow[] = [];
  try {
    for await (const chunk of readCsvRows(path)) rows.push(...chunk);
  } catch (error) {
    if (error instanceof CsvParseFailure) return { rows, failure: error };
    throw error;
  }
  return { rows, failure: null };
}

describe('readCsvRows', () => {
  it('when records span lines or blank lines sit between them, then each gets the line where it starts', async () => {
    const { rows } = await readAll('a,b\r\n1,2\r\n"multi\r\nline",3\r\n\r\n\r\n4,"x"\r\n');
    expect(rows.map((row) => [row.line, row.fields])).toEqual([
      [1, ['a', 'b']],
      [2, ['1', '2']],
      [3, ['multi\r\nline', '3']],
      [7, ['4', 'x']],
    ]);
  });

  it('when line endings are LF, or mixed, then line numbers still follow what an editor shows', async () => {
    const lf = await readAll('a,b\n1,2\n"multi\nline",3\n\n4,x\n');
    expect(lf.rows.map((row) => row.line)).toEqual([1, 2, 3, 6]);
    const mixed = await readAll('a,b\n1,2\n3,4\r\n5,"x\r\ny"\n6,7\n');
    expect(mixed.rows.map((row) => row.line)).toEqual([1, 2, 3, 4, 6]);
  });

  it('when the file starts with a UTF-8 BOM, then the BOM is not part of the first header cell', async () => {
    const { rows } = await readAll(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('sourceId,b\nx,y\n')]),
    );
    expect(rows[0]?.fields).toEqual(['sourceId', 'b']);
  });

  it('when rows have more or fewer fields than the header, then they are still delivered (checked later)', async () => {
    const { rows, failure } = await readAll('a,b\n1\n1,2,3\n');
    expect(failure).toBeNull();
    expect(rows.map((row) => row.fields.length)).toEqual([2, 1, 3]);
  });

  it('when quoting breaks mid-file, then the rows before are delivered and the failure names the line', async () => {
    const body = [
      'a,b',
      ...Array.from({ length: 3000 }, (_, i) => `${i},"v${i}"`),
      '9,"bro"ken',
      '10,ok',
    ].join('\n');
    const { rows, failure } = await readAll(body);
    expect(rows).toHaveLength(3001);
    expect(rows.at(-1)).toEqual({ fields: ['2999', 'v2999'], line: 3001 });
    expect(failure?.line).toBe(3002);
    expect(failure?.csvCode).toBe('CSV_INVALID_CLOSING_QUOTE');
  });

  it('when a quote is never closed, then reading stops at the record that opened it, without loading the rest', async () => {
    const { rows, failure } = await readAll(`a,b\n1,2\n3,"open\n${'x,'.repeat(MAX_RECORD_CHARS)}\n`);
    expect(rows.map((row) => row.line)).toEqual([1, 2]);
    expect(failure?.line).toBe(3);
    expect(failure?.csvCode).toBe('CSV_MAX_RECORD_SIZE');
  });

  it('when the file ends inside a quoted field, then the failure points at the record start', async () => {
    const { rows, failure } = await readAll('a,b\n1,2\n\n3,"never closed\n');
    expect(rows).toHaveLength(2);
    expect(failure?.line).toBe(4);
    expect(failure?.message).toMatch(/Quote Not Closed/);
  });
});

describe('inspectFile', () => {
  it('when a file is UTF-8, then it gives its sha256, size and lines', async () => {
    const path = join(dir, 'ok.csv');
    await writeFile(path, 'a,b\nété,€\n');
    expect(await inspectFile(path)).toEqual({
      checksum: createHash('sha256').update('a,b\nété,€\n').digest('hex'),
      size: Buffer.byteLength('a,b\nété,€\n'),
      lines: 2,
      invalidUtf8: null,
      bom: null,
      // é is C3 A9: as single bytes, C3 could start a double encoding; as UTF-8 it does not.
      mayBeEncodedTwice: { utf8: false, singleByte: true },
    });
  });

  it('when a UTF-8 file holds text encoded twice (CafÃ©), then its inspection says its rows need a look', async () => {
    const path = join(dir, 'twice.csv');
    await writeFile(path, 'a,b\nCafÃ©,1\n');
    expect((await inspectFile(path)).mayBeEncodedTwice.utf8).toBe(true);
    await writeFile(path, 'a,b\nCafé,1\n');
    expect((await inspectFile(path)).mayBeEncodedTwice.utf8).toBe(false);
  });

  it('when a large file is read in chunks, then its lines are counted, the last one without a line break too', async () => {
    const path = join(dir, 'lines.csv');
    await writeFile(path, `a,b\n${'x,€€€\n'.repeat(30_000)}y,z`);
    expect((await inspectFile(path)).lines).toBe(30_002);
    await writeFile(path, '');
    expect((await inspectFile(path)).lines).toBe(0);
  });

  it('when a latin-1 byte sits far into the file, across read chunks, then its offset and line are given', async () => {
    const path = join(dir, 'latin1.csv');
    const head = Buffer.from(`a,b\n${'x,€€€\n'.repeat(20_000)}`);
    await writeFile(path, Buffer.concat([head, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])]));
    const inspection = await inspectFile(path);
    expect(inspection.invalidUtf8).toEqual({ offset: head.length + 3, line: 20_002 });
  });

  it('when a file is cut inside its last character, then it is not valid UTF-8', async () => {
    const path = join(dir, 'cut.csv');
    await writeFile(path, Buffer.concat([Buffer.from('a,b\nx,'), Buffer.from('€').subarray(0, 2)]));
    expect((await inspectFile(path)).invalidUtf8).toEqual({ offset: 6, line: 2 });
  });
});
