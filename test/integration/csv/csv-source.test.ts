import { mkdir, mkdtemp, readdir, readFile, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import type { RowProblem, SourceRecord } from '../../../src/domain/records.js';
import { createLogger, type Logger } from '../../../src/logging/logger.js';
import { type CsvSource, createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../../../src/sources/ports.js';
import type { DownstreamFailure, SourceUnit } from '../../../src/sources/source.js';

const NOW = '2026-01-15T10:00:00.000Z';
const DAY = '2026-01-15';
const ACCOUNTS = 'sourceId,fullName,currencyCode,tags\nACC-1,Atelier,EUR,vip|fr\nACC-2,Nordwind,EUR,\n';
const INVOICE_HEADER =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount,file,paidAmount';
const INVOICES = `${INVOICE_HEADER}\nINV-1,ACC-1,F-1,2026-01-12,2026-02-11,120.00,20.00,,\nINV-2,ACC-2,F-2,2026-01-13,2026-02-12,60.00,10.00,,60.00\n`;
const CREDIT_NOTES =
  'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nCN-1,ACC-1,A-1,2026-01-14,12.00,2.00\n';

let dir: string;
let clock: ManualClock;
let ledger: InMemoryDropFileLedger;
let logLines: Array<Record<string, unknown>>;
let logger: Logger;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'csv-source-'));
  clock = new ManualClock(NOW);
  ledger = new InMemoryDropFileLedger();
  logLines = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  logger = createLogger({ level: 'debug', destination });
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Writes a file in the drop folder, modified an hour before the clock's now unless told. */
async function drop(
  name: string,
  content: string | Buffer,
  mtime = new Date(clock.now().getTime() - 3_600_000),
) {
  await writeFile(join(dir, name), content);
  await utimes(join(dir, name), mtime, mtime);
}

function source(
  options: { mapping?: Record<string, string>; batchSize?: number; strictColumns?: boolean } = {},
): CsvSource {
  return createCsvSource({
    config: {
      id: 'erp-csv',
      type: 'csv',
      dropDir: dir,
      stableSeconds: 5,
      mapping: options.mapping ?? {},
      strictColumns: options.strictColumns ?? false,
    },
    clock,
    logger,
    ledger,
    ...(options.batchSize ? { batchSize: options.batchSize } : {}),
  });
}

interface DrainedUnit {
  name: string;
  stream: string;
  records: SourceRecord[];
  lines: number[];
  rejected: RowProblem[];
  batches: number;
}

/** One pass as the engine runs it; `failures` plays the downstream failures of each unit. */
async function pass(
  csv: CsvSource,
  failures: (unit: DrainedUnit) => DownstreamFailure[] = () => [],
): Promise<DrainedUnit[]> {
  const drained: DrainedUnit[] = [];
  for await (const unit of csv.units()) {
    const result = await drain(unit);
    drained.push(result);
    await unit.complete({ failures: failures(result) });
  }
  return drained;
}

async function drain(unit: SourceUnit): Promise<DrainedUnit> {
  const result: DrainedUnit = {
    name: unit.name,
    stream: unit.stream,
    records: [],
    lines: [],
    rejected: [],
    batches: 0,
  };
  for await (const batch of unit.batches()) {
    result.batches++;
    result.records.push(...batch.records.map((r) => r.record));
    result.lines.push(...batch.records.map((r) => r.origin.line ?? -1));
    result.rejected.push(...batch.rejected);
  }
  return result;
}

const archived = (name = '') => join(dir, 'archive', DAY, name);
const rootFiles = async () =>
  (await readdir(dir)).filter((name) => !['archive', 'rejected', '.processing'].includes(name));

describe('a pass over the drop folder', () => {
  it('when every kind is dropped, then units come accounts first, invoices, credit notes, each kind by name', async () => {
    await drop('credit-notes.csv', CREDIT_NOTES);
    await drop('invoices-2026-01.csv', INVOICES);
    await drop('accounts-b.csv', 'sourceId,fullName,currencyCode\nACC-3,Polar,SEK\n');
    await drop('Accounts-A.CSV', ACCOUNTS);
    const units = await pass(source());
    expect(units.map((u) => [u.name, u.stream, u.records.length])).toEqual([
      ['Accounts-A.CSV', 'accounts', 2],
      ['accounts-b.csv', 'accounts', 1],
      ['invoices-2026-01.csv', 'invoices', 2],
      ['credit-notes.csv', 'creditNotes', 1],
    ]);
    expect(units[2]?.lines).toEqual([2, 3]);
    expect(units[0]?.records[0]).toEqual({
      kind: 'account',
      sourceId: 'ACC-1',
      fullName: 'Atelier',
      currencyCode: 'EUR',
      billingAddress: { street: null, city: null, postalCode: null, country: null },
      tags: ['vip', 'fr'],
      updatedAt: null,
    });
    expect(await rootFiles()).toEqual([]);
    expect((await readdir(archived())).sort()).toEqual(
      ['Accounts-A.CSV', 'accounts-b.csv', 'credit-notes.csv', 'invoices-2026-01.csv'].sort(),
    );
    expect(ledger.entries.map((e) => [e.name, e.status, e.rows, e.failedRows])).toEqual([
      ['Accounts-A.CSV', 'done', 2, 0],
      ['accounts-b.csv', 'done', 1, 0],
      ['invoices-2026-01.csv', 'done', 2, 0],
      ['credit-notes.csv', 'done', 1, 0],
    ]);
  });

  it('when a file has more rows than batchSize, then they come in batches of at most that size', async () => {
    const rows = Array.from({ length: 1203 }, (_, i) => `ACC-${i},Name ${i},EUR`).join('\n');
    await drop('accounts.csv', `sourceId,fullName,currencyCode\n${rows}\n`);
    const [unit] = await pass(source({ batchSize: 500 }));
    expect(unit?.batches).toBe(3);
    expect(unit?.records).toHaveLength(1203);
    expect(unit?.lines.at(-1)).toBe(1204);
  });

  it('when the file starts with a BOM and uses CRLF, then it is read like any other', async () => {
    await drop('accounts.csv', Buffer.from(`\uFEFF${ACCOUNTS.replaceAll('\n', '\r\n')}`));
    const [unit] = await pass(source());
    expect(unit?.records.map((r) => r.sourceId)).toEqual(['ACC-1', 'ACC-2']);
    expect(unit?.rejected).toEqual([]);
  });

  it('when the source maps its own headers, then they are read as the contract columns', async () => {
    await drop('accounts.csv', 'Kundennummer,Name,Währung\nK-1,Müller GmbH,EUR\n');
    const [unit] = await pass(
      source({ mapping: { Kundennummer: 'sourceId', Name: 'fullName', Währung: 'currencyCode' } }),
    );
    expect(unit?.records.map((r) => [r.sourceId, (r as { fullName: string }).fullName])).toEqual([
      ['K-1', 'Müller GmbH'],
    ]);
  });

  it('when the header row is longer than one read and holds a quoted line break, then it is still read whole', async () => {
    const extra = Array.from(
      { length: 300 },
      (_, i) => `"Extra column ${i}
with a second line"`,
    );
    await drop(
      'accounts.csv',
      `${extra.join(',')},sourceId,fullName,currencyCode
${extra.map(() => '').join(',')},A,B,EUR
`,
    );
    const [unit] = await pass(source());
    expect(unit?.records.map((r) => r.sourceId)).toEqual(['A']);
    expect(unit?.rejected).toEqual([]);
  });

  it('when a file has unknown columns, then each is a warning, with a suggestion for a near miss, in the log and the report', async () => {
    await drop('accounts.csv', 'sourceId,fullName,currencyCode,Notes,tag\nA,B,EUR,x,y\nC,D,EUR,z,w\n');
    const [unit] = await pass(source());
    expect(unit?.records).toHaveLength(2);
    const expected = [
      'unknown column "Notes": its values were ignored',
      'unknown column "tag" (did you mean "tags"?): its values were ignored',
    ];
    const logged = logLines.filter((line) => line.level === 40 && typeof line.warning === 'string');
    expect(logged.map((line) => [line.file, line.warning])).toEqual(expected.map((w) => ['accounts.csv', w]));
    // No row failed, yet the report is there to say what was ignored.
    const report = await readFile(archived('accounts.csv.errors.csv'), 'utf8');
    expect(report.split('\r\n')).toEqual([
      'errors.line,errors.column,errors.reason,sourceId,fullName,currencyCode,Notes,tag',
      ...expected.map((w) => `,,"${w.replaceAll('"', '""')}"`),
      '',
    ]);
    expect(ledger.entries[0]).toMatchObject({ status: 'done', failedRows: 0 });
  });

  it('when strictColumns is on and a column is unknown, then the file is rejected with the suggestion', async () => {
    await drop('accounts.csv', 'sourceId,fullName,currencyCode,tag\nA,B,EUR,x\n');
    const units = await pass(source({ strictColumns: true }));
    expect(units).toEqual([]);
    const reason = await readFile(join(dir, 'rejected', 'accounts.csv.reason.txt'), 'utf8');
    expect(reason).toContain('unknown column "tag" (did you mean "tags"?): strictColumns is on');
  });
});

describe('an error report dropped back', () => {
  it('when a report of neutralised cells is corrected and dropped back as it is, then its rows are read with their values', async () => {
    await drop(
      'accounts.csv',
      [
        'sourceId,fullName,currencyCode',
        'A,"=HYPERLINK(""http://x"")",EUR',
        'B,-Minus,EURO',
        'C,@Sum,EUR',
        '',
      ].join('\n'),
    );
    const [first] = await pass(source(), (unit) =>
      unit.records.map((record, i) => ({
        origin: { file: 'accounts.csv', line: unit.lines[i]! },
        sourceKey: record.sourceId,
        reason: '=cmd|calc',
      })),
    );
    expect(first?.rejected.map((p) => p.sourceKey)).toEqual(['B']);
    const report = await readFile(archived('accounts.csv.errors.csv'), 'utf8');
    const lines = report.split('\r\n');
    expect(lines[0]).toBe('errors.line,errors.column,errors.reason,sourceId,fullName,currencyCode');
    // Every cell a spreadsheet would run as a formula starts with a quote; no column is repeated.
    expect(lines.slice(1, 4)).toEqual([
      `2,,'=cmd|calc,A,"'=HYPERLINK(""http://x"")",EUR`,
      expect.stringMatching(/^3,currencyCode,"not an ISO 4217 currency code.*",B,'-Minus,EURO$/),
      `4,,'=cmd|calc,C,'@Sum,EUR`,
    ]);
    // Corrected in place (B's currency) and dropped back under a name the drop folder takes.
    await drop('accounts-fixed.csv', report.replace(',EURO', ',EUR'));
    const [again] = await pass(source({ strictColumns: true }));
    expect(again?.rejected).toEqual([]);
    expect(again?.records.map((r) => [r.sourceId, r.kind === 'account' && r.fullName])).toEqual([
      ['A', '=HYPERLINK("http://x")'],
      ['B', '-Minus'],
      ['C', '@Sum'],
    ]);
  });
});

describe('failed rows and the report', () => {
  it('when rows fail in the source or downstream, then the archive holds a report naming line, column and reason', async () => {
    await drop(
      'invoices.csv',
      [
        INVOICE_HEADER,
        'INV-1,ACC-1,F-1,2026-02-30,2026-03-01,"12,50",2.00,,', // line 2: refused by the source
        'INV-2,ACC-9,F-2,2026-01-13,2026-02-12,60.00,10.00,,', // line 3: refused downstream
        'INV-3,ACC-1,"F-3',
        'bis",2026-01-14,2026-02-13,30.00,5.00,,', // lines 4-5: valid, spans two lines
        'INV-1,ACC-1,F-9,2026-01-15,2026-02-14,1.00,0.00,,', // line 6: duplicate sourceId
        'INV-6,ACC-1,F-6,2026-01-15,2026-02-14,1.00,0.00,,,extra', // line 7: one field too many
        '',
      ].join('\n'),
    );
    // The engine hands back only the rows that failed after the source (the refused ones are its own).
    const units = await pass(source(), () => [
      {
        origin: { file: 'invoices.csv', line: 3 },
        sourceKey: 'INV-2',
        column: 'accountSourceId',
        reason: 'no account ACC-9',
      },
    ]);
    const unit = units[0]!;
    expect(unit.records.map((r) => r.sourceId)).toEqual(['INV-2', 'INV-3']);
    expect(unit.lines).toEqual([3, 4]);
    expect(unit.rejected.map((p) => [p.line, p.sourceKey, p.column])).toEqual([
      [2, 'INV-1', 'issuedDate; totalAmount'],
      [6, 'invoices.csv:6', 'sourceId'],
      [7, 'INV-6', undefined],
    ]);
    expect(unit.rejected[0]).toMatchObject({
      kind: 'invoice',
      file: 'invoices.csv',
      reason:
        'issuedDate: not a calendar date: "2026-02-30"; totalAmount: not an amount (a decimal with a dot, like 1234.50): "12,50"',
      raw: { sourceId: 'INV-1', issuedDate: '2026-02-30', totalAmount: '12,50' },
    });
    const report = await readFile(archived('invoices.csv.errors.csv'), 'utf8');
    expect(report.split('\r\n')).toEqual([
      `errors.line,errors.column,errors.reason,${INVOICE_HEADER}`,
      '2,issuedDate; totalAmount,"issuedDate: not a calendar date: ""2026-02-30""; totalAmount: not an amount (a decimal with a dot, like 1234.50): ""12,50""",INV-1,ACC-1,F-1,2026-02-30,2026-03-01,"12,50",2.00,,',
      '3,accountSourceId,no account ACC-9,INV-2,ACC-9,F-2,2026-01-13,2026-02-12,60.00,10.00,,',
      '6,sourceId,duplicate sourceId in this file (first on line 2),INV-1,ACC-1,F-9,2026-01-15,2026-02-14,1.00,0.00,,',
      '7,,the row has 10 fields but the header has 9,INV-6,ACC-1,F-6,2026-01-15,2026-02-14,1.00,0.00,,,extra',
      '',
    ]);
    // One row of five went through: the file is partial, not failed.
    expect(ledger.entries[0]).toMatchObject({
      status: 'partial',
      rows: 5,
      failedRows: 4,
      archivedPath: archived('invoices.csv'),
      reportPath: archived('invoices.csv.errors.csv'),
    });
  });

  it('when quoting breaks mid-file, then earlier rows go on and the rest is one failure naming the line', async () => {
    await drop('accounts.csv', 'sourceId,fullName,currencyCode\nA,Alpha,EUR\nB,"Be"ta,EUR\nC,Gamma,EUR\n');
    const [unit] = await pass(source());
    expect(unit?.records.map((r) => r.sourceId)).toEqual(['A']);
    expect(unit?.rejected).toEqual([
      {
        kind: 'account',
        sourceKey: 'accounts.csv:3',
        file: 'accounts.csv',
        line: 3,
        reason: expect.stringMatching(
          /^the file cannot be read from this line on, the rest of it was skipped: Invalid Closing Quote/,
        ),
      },
    ]);
    const report = await readFile(archived('accounts.csv.errors.csv'), 'utf8');
    expect(report.split('\r\n')[1]).toMatch(/^3,,"the file cannot be read from this line on/);
    expect(ledger.entries[0]).toMatchObject({ status: 'partial', failedRows: 1 });
  });

  it('when invoice rows point at PDFs, then only PDFs inside the drop folder are taken', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'csv-outside-'));
    try {
      await mkdir(join(dir, 'pdf'));
      await writeFile(join(dir, 'pdf', 'F-1.pdf'), '%PDF-1.4\n');
      await writeFile(join(dir, 'pdf', 'F-2.pdf'), 'GIF89a');
      await writeFile(join(outside, 'x.pdf'), '%PDF-1.4\n');
      await symlink(join(outside, 'x.pdf'), join(dir, 'pdf', 'escape.pdf'));
      const row = (id: string, file: string) => `${id},ACC-1,${id},2026-01-12,2026-02-11,1.00,0.00,${file},`;
      await drop(
        'invoices.csv',
        [
          INVOICE_HEADER,
          row('I1', 'pdf/F-1.pdf'),
          row('I2', '../etc/passwd'),
          row('I3', 'pdf/escape.pdf'),
          row('I4', 'pdf/F-2.pdf'),
          row('I5', 'pdf/nope.pdf'),
          row('I6', ''),
        ].join('\n'),
      );
      const [unit] = await pass(source());
      expect(unit?.records.map((r) => [r.sourceId, (r as { file: string | null }).file])).toEqual([
        ['I1', join(await import('node:fs/promises').then((fs) => fs.realpath(dir)), 'pdf', 'F-1.pdf')],
        ['I6', null],
      ]);
      expect(unit?.rejected.map((p) => [p.sourceKey, p.column, p.reason])).toEqual([
        ['I2', 'file', 'must stay inside the drop folder (no ".." in the path): "../etc/passwd"'],
        ['I3', 'file', 'must stay inside the drop folder, but it links outside it: "pdf/escape.pdf"'],
        ['I4', 'file', 'not a PDF (it does not start with the %PDF- signature): "pdf/F-2.pdf"'],
        ['I5', 'file', 'file not found: "pdf/nope.pdf"'],
      ]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('files that cannot be read', () => {
  it('when a required column is missing, then the file goes to rejected/ with a reason naming it', async () => {
    await drop(
      'invoices.csv',
      'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nI,A,N,2026-01-01,1,0\n',
    );
    const csv = source();
    expect(await pass(csv)).toEqual([]);
    expect(await rootFiles()).toEqual([]);
    expect(await readdir(join(dir, 'rejected'))).toEqual(['invoices.csv', 'invoices.csv.reason.txt']);
    const reason = await readFile(join(dir, 'rejected', 'invoices.csv.reason.txt'), 'utf8');
    expect(reason.split('\n')[0]).toBe('missing required column "dueDate" in the header row');
    expect(csv.lastPass().rejected).toEqual(['invoices.csv']);
    expect(ledger.entries[0]).toMatchObject({
      status: 'rejected',
      error: 'missing required column "dueDate" in the header row',
      archivedPath: join(dir, 'rejected', 'invoices.csv'),
    });
  });

  it('when a file is not UTF-8, then it is rejected before any row is used, naming the line', async () => {
    await drop(
      'accounts.csv',
      Buffer.concat([
        Buffer.from('sourceId,fullName,currencyCode\nA,Caf'),
        Buffer.from([0xe9]),
        Buffer.from(',EUR\n'),
      ]),
    );
    expect(await pass(source())).toEqual([]);
    const reason = await readFile(join(dir, 'rejected', 'accounts.csv.reason.txt'), 'utf8');
    expect(reason.split('\n')[0]).toBe(
      'not valid UTF-8: the first invalid byte is at offset 36 (line 2); save the file as UTF-8, or set format.encoding (windows-1252, iso-8859-1, or auto)',
    );
  });

  it('when the header row is over 1 MiB, then the file is rejected, the reason saying so', async () => {
    await drop('accounts.csv', `sourceId,fullName,"${'c'.repeat(2 << 20)}"\nA,B,C\n`);
    expect(await pass(source())).toEqual([]);
    expect(ledger.entries[0]).toMatchObject({
      status: 'rejected',
      error: 'the header row cannot be read: it is over 1 MiB (2,097,168 characters) on line 1',
    });
  });

  it('when a file is empty, then it is rejected: a header row is required', async () => {
    await drop('accounts.csv', '');
    expect(await pass(source())).toEqual([]);
    expect(ledger.entries[0]).toMatchObject({
      status: 'rejected',
      error: 'the file is empty: a header row is required',
    });
  });

  it('when the engine abandons a unit, then the file goes to rejected/ with the engine reason', async () => {
    await drop('accounts.csv', ACCOUNTS);
    for await (const unit of source().units()) {
      await drain(unit);
      await unit.abandon('the state DB went away');
    }
    const reason = await readFile(join(dir, 'rejected', 'accounts.csv.reason.txt'), 'utf8');
    expect(reason.split('\n')[0]).toBe('the state DB went away');
    expect(ledger.entries[0]).toMatchObject({ status: 'rejected', rows: 2 });
  });
});

describe('the same content dropped twice', () => {
  it('when a file content was already synced, then it is a unit of no record, its rows already synced, archived as a duplicate', async () => {
    await drop('invoices.csv', INVOICES);
    await pass(source());
    await drop('invoices.csv', INVOICES);
    await drop('invoices-copy.csv', INVOICES);
    const csv = source();
    const seen: Array<[string, number | undefined]> = [];
    for await (const unit of csv.units()) {
      let records = 0;
      for await (const batch of unit.batches()) records += batch.records.length + batch.rejected.length;
      expect(records).toBe(0);
      seen.push([unit.name, unit.alreadySynced]);
      await unit.complete({ failures: [] });
    }
    expect(seen).toEqual([
      ['invoices-copy.csv', 2],
      ['invoices.csv', 2],
    ]);
    expect(csv.lastPass().duplicates).toEqual(['invoices-copy.csv', 'invoices.csv']);
    expect((await readdir(archived())).sort()).toEqual([
      'invoices-copy.csv',
      'invoices.csv',
      'invoices~2.csv',
    ]);
    expect(ledger.entries.map((e) => [e.name, e.status])).toEqual([
      ['invoices.csv', 'done'],
      ['invoices-copy.csv', 'duplicate'],
      ['invoices.csv', 'duplicate'],
    ]);
    // Each duplicate is logged with the archive of the first copy of its content.
    const duplicates = logLines.filter((l) => l.level === 30 && l.firstArchivedPath !== undefined);
    expect(duplicates.map((l) => l.file).sort()).toEqual(['invoices-copy.csv', 'invoices.csv']);
  });

  it('when the earlier pass of that content had failed rows, then it is read again (a retry)', async () => {
    // (Its first entry is partial: one of its two rows went through.)
    await drop('invoices.csv', INVOICES);
    await pass(source(), () => [
      { origin: { file: 'invoices.csv', line: 2 }, sourceKey: 'INV-1', reason: 'no account' },
    ]);
    await drop('invoices.csv', INVOICES);
    const units = await pass(source());
    expect(units.map((u) => u.records.length)).toEqual([2]);
    expect(ledger.entries.map((e) => e.status)).toEqual(['partial', 'done']);
  });
});
