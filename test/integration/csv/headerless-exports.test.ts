import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { sourceSchema } from '../../../src/config/schema.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { isoDateOf, type RowProblem, type SourceRecord } from '../../../src/domain/records.js';
import { createLogger } from '../../../src/logging/logger.js';
import { type CsvSourceConfig, createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../../../src/sources/ports.js';
import { REPO_ROOT } from '../../support/cli.js';

/**
 * Sage 50 Accounts (UK) exports its customers and its audit trail without a header row: the
 * worked example's configuration (test/fixtures/exports/sage-50/source.yaml) names their columns
 * by letter, adds net and tax, and takes each invoice's due date from its customer's payment days
 * in the other file, read in the same pass. Read by the CSV source alone, in dry runs unless said.
 */
const SAGE = join(REPO_ROOT, 'test', 'fixtures', 'exports', 'sage-50');
const SOURCE = parseYaml(readFileSync(join(SAGE, 'source.yaml'), 'utf8')) as Record<string, unknown>;
const CUSTOMERS = readFileSync(join(SAGE, 'CUSTOMERS.CSV')).toString('latin1');
const AUDIT = readFileSync(join(SAGE, 'AUDIT.CSV')).toString('latin1');
const NOW = '2026-02-01T10:00:00.000Z';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-headerless-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function sourceOf(settings: Record<string, unknown>, options: { ledger?: InMemoryDropFileLedger } = {}) {
  const config = sourceSchema.parse({
    id: 'sage',
    type: 'csv',
    dropDir: dir,
    stableSeconds: 0,
    ...settings,
  }) as CsvSourceConfig;
  return createCsvSource({
    config,
    clock: new ManualClock(NOW),
    logger: createLogger({ level: 'silent' }),
    ledger: options.ledger ?? new InMemoryDropFileLedger(),
    dryRun: options.ledger === undefined,
  });
}

/** One pass: its records, refused rows and skipped rows; units completed (or released in a dry run). */
async function pass(source: ReturnType<typeof sourceOf>) {
  const records: SourceRecord[] = [];
  const rejected: RowProblem[] = [];
  let skipped = 0;
  for await (const unit of source.units()) {
    for await (const batch of unit.batches()) {
      records.push(...batch.records.map((r) => r.record));
      rejected.push(...batch.rejected);
    }
    skipped += unit.skippedRows ?? 0;
    await unit.complete({ failures: [] });
  }
  return { records, rejected, skipped, refused: source.lastPass().refused };
}

const read = (settings: Record<string, unknown> = SOURCE) => pass(sourceOf(settings));

/** Writes a file as Sage does (Windows-1252), complete a while ago. */
async function drop(name: string, text: string) {
  await writeFile(join(dir, name), Buffer.from(text, 'latin1'));
  const past = new Date(Date.parse(NOW) - 3_600_000);
  await utimes(join(dir, name), past, past);
}

const dueDates = (records: readonly SourceRecord[]) =>
  Object.fromEntries(
    records.flatMap((r) => (r.kind === 'invoice' ? [[r.sourceId, isoDateOf(r.dueDate)]] : [])),
  );

describe('Sage 50: files without a header, read by column letter', () => {
  it('when the customer file and the audit trail are dropped together, then every record is as the export says, the other transaction types skipped and counted', async () => {
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop('AUDIT.CSV', AUDIT);
    const { records, rejected, skipped, refused } = await read();
    expect(refused).toEqual([]);
    expect(rejected).toEqual([]);
    expect(skipped).toBe(2);
    const expected = JSON.parse(readFileSync(join(SAGE, 'expected.json'), 'utf8'));
    const accounts = records.filter((r) => r.kind === 'account');
    expect(accounts.map((a) => ({ ...a, kind: undefined, tags: undefined, updatedAt: undefined }))).toEqual(
      expected.accounts.map((a: object) => ({
        ...a,
        kind: undefined,
        tags: undefined,
        updatedAt: undefined,
      })),
    );
    const documents = records.flatMap((r) =>
      r.kind === 'account'
        ? []
        : [
            {
              kind: r.kind,
              sourceId: r.sourceId,
              accountSourceId: r.accountSourceId,
              number: r.number,
              issuedDate: isoDateOf(r.issuedDate),
              ...(r.kind === 'invoice' ? { dueDate: isoDateOf(r.dueDate), paidAmount: r.paidAmount } : {}),
              totalAmount: r.totalAmount,
              taxAmount: r.taxAmount,
            },
          ],
    );
    expect(documents.filter((d) => d.kind === 'invoice')).toEqual(
      expected.invoices.map((i: object) => ({ kind: 'invoice', ...i })),
    );
    expect(documents.filter((d) => d.kind === 'creditNote')).toEqual(
      expected.creditNotes.map((c: object) => ({ kind: 'creditNote', ...c })),
    );
  });

  it('when the audit trail is dropped without the customer file, then each document row fails naming its line, its column and the file to drop with it; its credit note syncs', async () => {
    await drop('AUDIT.CSV', AUDIT);
    const { records, rejected } = await read();
    expect(records.map((r) => r.sourceId)).toEqual(['CRN0041']);
    expect(rejected.map((p) => [p.line, p.column, p.sourceKey])).toEqual([
      [1, 'column E (dueDate)', 'INV1001'],
      [3, 'column E (dueDate)', 'INV1002'],
      [4, 'column E (dueDate)', 'INV1003'],
      [6, 'column E (dueDate)', 'INV1004'],
    ]);
    expect(rejected[0]!.reason).toBe(
      'the days in column AD of account "BRAM001" in the accounts file are not known: no accounts file was read in this pass; drop the accounts file ("CUSTOMERS*.CSV") together with this one',
    );
  });

  it("when an account's payment days are missing from the customer file or not a number, then its documents fail naming the column, the file and the line", async () => {
    const lines = CUSTOMERS.split('\r\n');
    // O'Connor (line 3) has no days; Dunmore (line 4) has "14 days"; Café Renée (line 2) is gone.
    lines[2] = lines[2]!.replace(',0.00,30,1,', ',0.00,,1,');
    lines[3] = lines[3]!.replace(',0.00,14,1,', ',0.00,14 days,1,');
    await drop('CUSTOMERS.CSV', [lines[0], lines[2], lines[3], lines[4]].join('\r\n'));
    await drop('AUDIT.CSV', AUDIT);
    const { records, rejected } = await read();
    expect(dueDates(records)).toEqual({ INV1001: '2026-02-04' });
    expect(Object.fromEntries(rejected.map((p) => [p.sourceKey, p.reason]))).toEqual({
      INV1002:
        'the days in column AD of account "CAFE001" in the accounts file are not known: the accounts file read in this pass (CUSTOMERS.CSV) holds no account "CAFE001"; drop the accounts file that has it together with this one',
      INV1003:
        'the days to add are empty in column AD of account "OCON001" (CUSTOMERS.CSV, line 2): fill them in the accounts file',
      INV1004:
        'the days to add are not a whole number of days in column AD of account "DUNM001" (CUSTOMERS.CSV, line 3): "14 days"',
    });
  });

  it('when a net or tax amount is no amount, then its document fails naming that column', async () => {
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop('AUDIT.CSV', AUDIT.replace('Carriage,45.00,T1,9.00,', 'Carriage,45.00,T1,n/a,'));
    const { rejected } = await read();
    expect(rejected).toHaveLength(1);
    expect(rejected[0]).toMatchObject({
      line: 1,
      sourceKey: 'INV1001',
      column: 'columns H + J (totalAmount); column J (taxAmount)',
    });
    expect(rejected[0]!.reason).toBe(
      'columns H + J (totalAmount): line 2: column J: not an amount in the form 1234.56: "n/a" (the document\'s rows are summed); column J (taxAmount): line 2: not an amount in the form 1234.56: "n/a" (the document\'s rows are summed)',
    );
  });

  it("when a row is narrower than the file's first row, then it fails naming the columns it lacks by letter", async () => {
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop(
      'AUDIT.CSV',
      AUDIT.replace(
        'INV1004,Gate hinges & latches,316.67,T1,63.33,1.00,,MANAGER,,',
        'INV1004,Gate hinges,316.67,T1',
      ),
    );
    const { rejected } = await read();
    expect(rejected.map((p) => [p.line, p.sourceKey, p.reason])).toEqual([
      [
        6,
        'INV1004',
        "the row has 9 columns (A to I) but the file's first row has 15 (A to O): it has no column J (totalAmount), column J (taxAmount)",
      ],
    ]);
  });

  it("when the configuration names a column beyond the file's first row, then the file is rejected naming the key and the column", async () => {
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop('AUDIT.CSV', AUDIT);
    const columns = SOURCE.columns as Record<string, Record<string, unknown>>;
    const { refused } = await read({
      ...SOURCE,
      columns: { ...columns, invoices: { ...columns.invoices, taxAmount: 'AJ' } },
    });
    expect(refused.map((r) => [r.unit, r.reason])).toEqual([
      [
        'AUDIT.CSV',
        "columns.invoices.taxAmount names column AJ, beyond the 15 columns of the file's first row (A to O)",
      ],
    ]);
  });

  it('when the customer file is dropped again unchanged with a later audit trail, then it is read again, so the due dates are known', async () => {
    const ledger = new InMemoryDropFileLedger();
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop('AUDIT.CSV', AUDIT);
    const first = await pass(sourceOf(SOURCE, { ledger }));
    expect(first.rejected).toEqual([]);
    expect((await readdir(dir)).filter((name) => /\.csv$/i.test(name))).toEqual([]);
    await drop('CUSTOMERS.CSV', CUSTOMERS.replace(',0.00,14,1,', ',0.00,30,1,'));
    await drop('AUDIT.CSV', AUDIT);
    const again = await pass(sourceOf(SOURCE, { ledger }));
    expect(again.rejected).toEqual([]);
    // Dunmore's terms went from 14 to 30 days: INV1004, of the unchanged audit trail, follows them.
    expect(dueDates(again.records)).toMatchObject({ INV1001: '2026-02-04', INV1004: '2026-02-21' });
    await drop('CUSTOMERS.CSV', CUSTOMERS);
    await drop('AUDIT.CSV', AUDIT);
    const same = await pass(sourceOf(SOURCE, { ledger }));
    expect(same.rejected).toEqual([]);
    expect(dueDates(same.records)).toMatchObject({ INV1004: '2026-02-05' });
  });
});
