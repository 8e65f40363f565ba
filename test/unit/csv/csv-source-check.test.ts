import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sourceSchema } from '../../../src/config/schema.js';
import { csvDescription } from '../../../src/sources/csv/csv-description.js';

type CsvConfig = Parameters<typeof csvDescription>[0];

/** `doctor`'s check of a CSV source, and what it says of a unit a pass could not read. */
describe('a CSV source describes its kinds', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const configOf = (over: Record<string, unknown> = {}): CsvConfig => {
    const dropDir = mkdtempSync(join(tmpdir(), 'rs-csv-check-'));
    dirs.push(dropDir);
    return sourceSchema.parse({ id: 'erp', type: 'csv', dropDir, ...over }) as CsvConfig;
  };

  it('when a file of the drop folder matches no kind, then the check warns naming it, with the format of each kind', async () => {
    const config = configOf({
      files: { accounts: 'Kunden*.csv', invoices: 'Rechnungen*.csv' },
      format: { encoding: 'windows-1252', delimiter: ';', decimalSeparator: ',', thousandsSeparator: '.' },
      formats: { invoices: { dateFormat: 'dd.MM.yyyy', headerLine: 2 } },
      columns: { accounts: { sourceId: 'Kundennummer', fullName: 'Name', currencyCode: { value: 'EUR' } } },
      rows: { invoices: { negativeIsCreditNote: true, skip: [{ column: 'Nr', empty: true }] } },
    });
    for (const name of ['invoices.csv', 'notes\n.txt', '.hidden.csv', 'Rechnungen.csv.part'])
      writeFileSync(join(config.dropDir, name), 'x\n');
    writeFileSync(
      join(config.dropDir, 'Kunden.csv'),
      Buffer.from('Kundennummer;Name\n10001;Müller\n', 'latin1'),
    );
    const result = await csvDescription(config).check({ env: {}, baseDir: '/' });
    expect(result.status).toBe('warn');
    // Hidden and half-written files are never taken by convention: not named.
    expect(result.detail).toMatch(
      /^2 files of the drop folder match no kind \(files:\) and are left where they are: invoices\.csv, notes\\n\.txt \(add a pattern under files:, or move them\); drop folder .*: exists, writable/,
    );
    expect(result.detail).toContain(
      'kinds: accounts "Kunden*.csv": windows-1252, delimiter ";", decimal ",", thousands ".", dates yyyy-MM-dd, header on line 1; columns set; ' +
        'invoices "Rechnungen*.csv": windows-1252, delimiter ";", decimal ",", thousands ".", dates dd.MM.yyyy, header on line 2; rows (skip, negativeIsCreditNote) set; ' +
        'creditNotes "credit-notes*.csv": windows-1252, delimiter ";", decimal ",", thousands ".", dates yyyy-MM-dd, header on line 1',
    );
  });

  it('when every file is taken by a kind, then the check is ok and says the contract format', async () => {
    const config = configOf();
    writeFileSync(join(config.dropDir, 'accounts.csv'), 'sourceId,fullName,currencyCode\nA-1,Atelier,EUR\n');
    const result = await csvDescription(config).check({ env: {}, baseDir: '/' });
    expect(result).toEqual({
      status: 'ok',
      detail: expect.stringContaining(
        'kinds: accounts "accounts*.csv": utf-8, delimiter ",", decimal ".", thousands none, dates yyyy-MM-dd, header on line 1; invoices',
      ),
    });
  });

  it('when a waiting file would be rejected by a pass, then the check warns with the reason a pass would give, and moves nothing', async () => {
    const config = configOf();
    writeFileSync(join(config.dropDir, 'accounts.csv'), 'sourceId;fullName;currencyCode\nA-1;Atelier;EUR\n');
    const result = await csvDescription(config).check({ env: {}, baseDir: '/' });
    expect(result.status).toBe('warn');
    expect(result.detail).toMatch(
      /^accounts\.csv would be rejected by a pass: the header was read as one cell, and it holds ";": .*set format\.delimiter: ";", or auto/,
    );
    expect(readdirSync(config.dropDir)).toEqual(['accounts.csv']);
  });

  it('when the drop folder is missing, then the check fails as before', async () => {
    const config = configOf();
    rmSync(config.dropDir, { recursive: true });
    const result = await csvDescription(config).check({ env: {}, baseDir: '/' });
    expect(result).toMatchObject({ status: 'fail', detail: expect.stringContaining('does not exist') });
  });

  it('when a unit could not be read, then it is the kind its name takes, set aside in rejected/; a name no kind takes is none', () => {
    const description = csvDescription(configOf({ files: { creditNotes: ['Gutschrift*.csv'] } }));
    expect(description.unreadUnit('Gutschrift-04.csv')).toEqual({
      kind: 'creditNote',
      file: 'rejected/Gutschrift-04.csv',
    });
    expect(description.unreadUnit('INVOICES-1.CSV')).toEqual({
      kind: 'invoice',
      file: 'rejected/INVOICES-1.CSV',
    });
    expect(description.unreadUnit('erp/invoices')).toBeNull();
  });
});
