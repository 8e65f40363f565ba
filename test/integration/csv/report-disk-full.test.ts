import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { faultLine } from '../../../src/cli/fault-line.js';
import { DAY, type DropWorld, dropWorld, INVOICE_HEADER } from '../../support/csv-drop-pass.js';
import { fillDisk, mountTmpfs, tmpfsAvailable, unmountTmpfs } from '../../support/tmpfs.js';

/**
 * The disk of the drop folder fills up while a file's report of failed rows is written (a tmpfs of
 * 1 MB of its own, filled to the last byte once the file was read and synced, before it settles).
 * The file must not be archived beside a report cut short: it goes back to the drop folder, nothing
 * of the report or its spools stays in `.processing/`, the error says that files and records stay
 * where they were (and they do), and the next pass with space archives it with its whole report.
 */

const ACCOUNTS = 'sourceId,fullName,currencyCode\nACC-1,Atelier,EUR\n';
const invoiceRows = (from: number, to: number, dueDate: string) =>
  Array.from(
    { length: to - from + 1 },
    (_, k) => `I-${from + k},ACC-1,F-${from + k},2026-01-02,${dueDate},1.00,0.00\n`,
  ).join('');
/** 100 invoices to sync, then 100 refused for their due date: a report of 100 rows. */
const INVOICES = `${INVOICE_HEADER}\n${invoiceRows(1, 100, '2026-02-01')}${invoiceRows(101, 200, 'soon')}`;

let world: DropWorld;
let mountPoint: string;

beforeEach(async () => {
  world = await dropWorld({
    dir: async (base) => {
      mountPoint = join(base, 'drop');
      mountTmpfs(mountPoint, '1m');
      return mountPoint;
    },
  });
});
afterEach(async () => {
  unmountTmpfs(mountPoint);
  await world.cleanup();
});

const at = (...parts: string[]) => join(world.dir, ...parts);
const listing = async (...parts: string[]) => (await readdir(at(...parts)).catch(() => [])).sort();
const ballast = () => at('.ballast');

describe.skipIf(!tmpfsAvailable())('the drop folder disk full while a report is written', () => {
  it('when the report cannot be written, then the file goes back to the drop folder, no draft or spool stays, the message is true, and the next pass archives it with its whole report', async () => {
    await world.drop('accounts.csv', ACCOUNTS);
    await world.drop('invoices.csv', INVOICES);

    const error = await world
      .pass({
        beforeSettle: async (unit) => {
          if (unit.name === 'invoices.csv') fillDisk(ballast());
        },
      })
      .catch((thrown: unknown) => thrown);

    expect(error).toMatchObject({ code: 'CSV_DROP_DIR_FULL', kind: 'infrastructure', retryable: true });
    const line = faultLine(error, null);
    expect(line).toMatch(
      /^could not run: a disk of the drop folder is full \(CSV_DROP_DIR_FULL: disk full: the report of invoices\.csv could not be written in .*\/\.processing \(ENOSPC\)/,
    );
    expect(line).toContain('files and records stay where they were');
    // And so they do: the file whole in the drop folder, nothing archived or left in .processing.
    expect(await listing()).toEqual(['.ballast', '.processing', 'archive', 'invoices.csv']);
    expect(await readFile(at('invoices.csv'), 'utf8')).toBe(INVOICES);
    expect(await listing('archive', DAY)).toEqual(['accounts.csv']);
    expect(await listing('.processing')).toEqual([]);
    // The rows went as far as the pass did: the valid ones synced, the others recorded as failures.
    expect(world.api.documents.size).toBe(100);
    expect([...world.state.failureRows.values()].filter((f) => f.kind === 'invoice')).toHaveLength(100);
    expect(world.state.runRows.map((r) => r.status)).toEqual(['failed']);

    await rm(ballast());
    const healed = await world.pass();

    expect(healed.counts.invoices).toMatchObject({ created: 0, unchanged: 100, failed: 100 });
    expect(world.api.writes.filter((w) => w === 'createDocument')).toHaveLength(100);
    expect(await listing()).toEqual(['.processing', 'archive']);
    expect(await listing('.processing')).toEqual([]);
    expect(await listing('archive', DAY)).toEqual([
      'accounts.csv',
      'invoices.csv',
      'invoices.csv.errors.csv',
    ]);
    expect(await readFile(at('archive', DAY, 'invoices.csv'), 'utf8')).toBe(INVOICES);
    const report = (await readFile(at('archive', DAY, 'invoices.csv.errors.csv'), 'utf8'))
      .trimEnd()
      .split('\r\n');
    expect(report).toHaveLength(101);
    expect(report.at(-1)).toMatch(/^201,dueDate,.*,I-200,ACC-1,F-200,2026-01-02,soon,1\.00,0\.00$/);
  });

  it('when an older version left a report cut short and its spools in .processing, then the next pass removes them', async () => {
    await mkdir(at('.processing'));
    await writeFile(at('.processing', 'invoices.csv.failed.ndjson'), '{"line":2}\n');
    await writeFile(at('.processing', 'invoices.csv.errors.csv.tmp'), 'errors.line,errors.column\n2,');

    await world.pass();

    expect(await listing('.processing')).toEqual([]);
  });
});
