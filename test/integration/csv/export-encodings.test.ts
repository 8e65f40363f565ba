import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sourceSchema } from '../../../src/config/schema.js';
import { ManualClock } from '../../../src/domain/clock.js';
import type { RowProblem, SourceRecord } from '../../../src/domain/records.js';
import { createLogger } from '../../../src/logging/logger.js';
import { type CsvSourceConfig, createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../../../src/sources/ports.js';
import { REPO_ROOT } from '../../support/cli.js';

/**
 * The ugly parts of real exports' bytes, read by the CSV source alone: an encoding and a delimiter
 * left to `auto`, a UTF-16 file with its BOM (Excel's "Unicode text"), a `;` file read as `,`, text
 * encoded twice. Every file is read in a dry run (nothing moves) and its records compared.
 */
const DATEV = join(REPO_ROOT, 'test', 'fixtures', 'exports', 'datev-erp');
const NOW = '2026-02-01T10:00:00.000Z';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-encodings-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The worked example's settings for this export (docs/sources-csv.md), read from the fixture. */
const DATEV_SOURCE = parseYaml(readFileSync(join(DATEV, 'source.yaml'), 'utf8')) as {
  columns: { invoices: Record<string, string> };
  rows: { invoices: Record<string, unknown> };
};

async function read(settings: Record<string, unknown>) {
  const config = sourceSchema.parse({
    id: 'erp',
    type: 'csv',
    dropDir: dir,
    stableSeconds: 0,
    ...settings,
  }) as CsvSourceConfig;
  const source = createCsvSource({
    config,
    clock: new ManualClock(NOW),
    logger: createLogger({ level: 'silent' }),
    ledger: new InMemoryDropFileLedger(),
    dryRun: true,
  });
  const records: SourceRecord[] = [];
  const rejected: RowProblem[] = [];
  const warnings: string[] = [];
  for await (const unit of source.units()) {
    for await (const batch of unit.batches()) {
      records.push(...batch.records.map((r) => r.record));
      rejected.push(...batch.rejected);
    }
    warnings.push(...(unit.warnings ?? []));
    await unit.release();
  }
  return { records, rejected, warnings, refused: source.lastPass().refused };
}

async function drop(name: string, content: string | Buffer) {
  await writeFile(join(dir, name), content);
  const past = new Date(Date.parse(NOW) - 3_600_000);
  await utimes(join(dir, name), past, past);
}

describe('export bytes', () => {
  it('when encoding and delimiter are auto, then a Windows-1252 ";" export reads as with both given', async () => {
    await copyFile(join(DATEV, 'Rechnungen.csv'), join(dir, 'Rechnungen.csv'));
    const common = {
      files: { invoices: 'Rechnungen*.csv' },
      columns: { invoices: DATEV_SOURCE.columns.invoices },
      rows: { invoices: DATEV_SOURCE.rows.invoices },
    };
    const number = { decimalSeparator: ',', thousandsSeparator: '.', dateFormat: 'dd.MM.yyyy' };
    const given = await read({ ...common, format: { encoding: 'windows-1252', delimiter: ';', ...number } });
    const auto = await read({ ...common, format: { encoding: 'auto', delimiter: 'auto', ...number } });
    expect(given.rejected).toEqual([]);
    expect(given.records).toHaveLength(5);
    expect(auto.records).toEqual(given.records);
    expect(auto.records.find((r) => r.sourceId === 'RE-2026-0003')).toMatchObject({
      totalAmount: '15232.00',
    });
  });

  it('when a file is UTF-16 with its BOM and tab-separated (Excel "Unicode text"), then it reads, whatever encoding is configured', async () => {
    const text = 'sourceId\tfullName\tcurrencyCode\nK-1\tMüller GmbH\tEUR\nK-2\tZoë Ltd\tgbp\n';
    await drop('accounts.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const { records, rejected } = await read({ format: { encoding: 'windows-1252', delimiter: 'auto' } });
    expect(rejected).toEqual([]);
    expect(records.map((r) => [r.sourceId, r.kind === 'account' && r.fullName])).toEqual([
      ['K-1', 'Müller GmbH'],
      ['K-2', 'Zoë Ltd'],
    ]);
    expect(records[1]).toMatchObject({ currencyCode: 'GBP' });
  });

  it('when a ";" file is read as ",", then it is rejected with the delimiter to set', async () => {
    await drop('accounts.csv', 'sourceId;fullName;currencyCode\nK-1;Müller GmbH;EUR\n');
    const { records, refused } = await read({});
    expect(records).toEqual([]);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.reason).toContain(
      'the header was read as one cell, and it holds ";": the file seems separated by it (set format.delimiter: ";", or auto)',
    );
  });

  it('when a UTF-8 file holds text encoded twice, then it is synced as written with a warning naming the line and the column', async () => {
    await drop(
      'accounts.csv',
      'sourceId,fullName,currencyCode\nK-1,Café Lumière,EUR\nK-2,MÃ¼ller GmbH,EUR\nK-3,CafÃ© Ã‰lan,EUR\n',
    );
    const { records, warnings } = await read({});
    expect(records).toHaveLength(3);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^line 3, column "fullName": "MÃ¼ller GmbH" looks encoded twice .*\(and 1 more\)/,
      ),
    ]);
  });

  it('when a file said to be UTF-8 is Windows-1252, then it is rejected naming the line and the setting', async () => {
    await drop(
      'accounts.csv',
      Buffer.from('sourceId,fullName,currencyCode\nK-1,M\xfcller GmbH,EUR\n', 'latin1'),
    );
    const { refused } = await read({});
    expect(refused[0]!.reason).toMatch(
      /not valid UTF-8: .*\(line 2\).*set format\.encoding \(windows-1252, iso-8859-1, or auto\)/,
    );
    const auto = await read({ format: { encoding: 'auto' } });
    expect(auto.records).toEqual([expect.objectContaining({ sourceId: 'K-1', fullName: 'Müller GmbH' })]);
  });
});
