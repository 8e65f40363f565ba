import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NAME_BYTES_KEPT } from '../../../src/sources/csv/drop-names.js';
import { ACCOUNTS, DAY, type DropWorld, dropWorld, INVOICE_HEADER } from '../../support/csv-drop-pass.js';

/**
 * A file name may be up to 255 bytes; the names the source makes from it (its lease, its spools,
 * a numbered copy, its report) add to it. One long name must never hold up the other files of its
 * source, in this pass or the next.
 */

let world: DropWorld | undefined;
afterEach(async () => {
  await world?.cleanup();
  world = undefined;
});

/** `invoices-xxx…x.csv` of exactly `bytes` bytes. */
const longName = (bytes: number, fill = 'x') => `invoices-${fill.repeat(bytes - 'invoices-.csv'.length)}.csv`;

const invoices = (...rows: string[]) => `${INVOICE_HEADER}\n${rows.join('\n')}\n`;
const invoiceRow = (n: number, issued = '2026-01-02') => `I-${n},ACC-1,F-${n},${issued},2026-02-01,1.00,0.00`;

describe('a 253-byte file name', () => {
  it('when it is dropped next to a normal file, then both are synced, the long one archived under a shortened name with its report, and the next pass is not held up', async () => {
    world = await dropWorld();
    const name = longName(253);
    expect(Buffer.byteLength(name)).toBe(253);
    await world.drop('accounts.csv', ACCOUNTS);
    // One row refused (a bad date): the file gets a report, `<name>.errors.csv`.
    await world.drop(name, invoices(invoiceRow(1), invoiceRow(2, 'not-a-date')));

    const first = await world.pass();

    expect(first.abandoned).toEqual([]);
    expect(first.counts.accounts.created).toBe(1);
    expect(first.counts.invoices).toMatchObject({ created: 1, failed: 1 });
    const archived = (await readdir(join(world.dir, 'archive', DAY))).sort();
    expect(archived).toHaveLength(3);
    expect(archived[0]).toBe('accounts.csv');
    const [stored, report] = archived.slice(1);
    expect(Buffer.byteLength(stored!)).toBeLessThanOrEqual(NAME_BYTES_KEPT);
    expect(stored).toMatch(/^invoices-x+~[0-9a-f]{12}\.csv$/);
    expect(report).toBe(`${stored}.errors.csv`);
    expect(await readFile(join(world.dir, 'archive', DAY, report!), 'utf8')).toContain('issuedDate');
    expect(await readdir(join(world.dir, '.processing'))).toEqual([]);
    expect(world.state.runRows.map((r) => r.status)).toEqual(['partial']);

    // The same name again, with a new row, and another file: neither is held up.
    await world.drop(name, invoices(invoiceRow(1), invoiceRow(3)));
    await world.drop('accounts-2.csv', 'sourceId,fullName,currencyCode\nACC-2,Nordwind,EUR\n');
    const second = await world.pass();
    expect(second.abandoned).toEqual([]);
    expect(second.counts.accounts.created).toBe(1);
    expect(second.counts.invoices).toMatchObject({ created: 1, unchanged: 1, failed: 0 });
    // Its second archive copy is numbered within the byte limit.
    const again = (await readdir(join(world.dir, 'archive', DAY))).filter((n) => n.startsWith('invoices-'));
    expect(again).toHaveLength(3);
    for (const n of again) expect(Buffer.byteLength(n)).toBeLessThanOrEqual(255);
  });
});

describe('a file whose path the file system refuses once in .processing/', () => {
  it('when the drop folder path is so deep that the claimed path passes PATH_MAX, then that file alone is left and reported, and the others are synced, pass after pass', async () => {
    const name = longName(240, 'y');
    world = await dropWorld({
      // A drop folder of 3,850 bytes: `<dir>/<name>` fits in PATH_MAX (4,095), `<dir>/.processing/<name>` does not.
      dir: async (base) => {
        let dir = base;
        while (dir.length < 3850 - 201) dir = join(dir, 'd'.repeat(200));
        dir = join(dir, 'e'.repeat(3850 - dir.length - 1));
        await mkdir(dir, { recursive: true });
        return dir;
      },
    });
    expect(world.dir.length).toBe(3850);
    await world.drop(name, invoices(invoiceRow(1)));
    await world.drop('accounts.csv', ACCOUNTS);

    const first = await world.pass();

    expect(first.counts.accounts.created).toBe(1);
    expect(first.abandoned).toEqual([
      {
        unit: name,
        reason: expect.stringContaining('cannot work on this file by its name (ENAMETOOLONG)'),
        stream: 'invoices',
        place: null, // left where it was
      },
    ]);
    expect((await readdir(world.dir)).filter((n) => n.startsWith('invoices-'))).toEqual([name]);
    expect(await readdir(join(world.dir, '.processing'))).toEqual([]);

    await world.drop('accounts-2.csv', 'sourceId,fullName,currencyCode\nACC-2,Nordwind,EUR\n');
    const second = await world.pass();
    expect(second.counts.accounts.created).toBe(1);
    expect(second.abandoned.map((a) => a.unit)).toEqual([name]);
  });
});
