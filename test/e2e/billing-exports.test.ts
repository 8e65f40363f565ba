import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { parseDecimal } from '../../src/domain/decimal.js';
import type { DateParts } from '../../src/domain/records.js';
import { REPO_ROOT, runCli } from '../support/cli.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { lastJsonLine, type SyncEnv, syncEnv } from '../support/sync-env.js';

/**
 * What a real billing system exports, synced with configuration alone: each folder of
 * test/fixtures/exports holds a system's export as it writes it (bytes, encoding, title lines,
 * footers: see its SOURCE.md for where the shape comes from), the `source.yaml` that syncs it (the
 * worked example of docs/sources-csv.md), and `expected.json`, the records a correct sync makes.
 * Each is synced into the sandbox; then the same export again (nothing written), then a re-export
 * with one amount changed (that document alone updated).
 */
const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'exports');

interface Expected {
  accounts: Array<{
    sourceId: string;
    fullName: string;
    currencyCode: string;
    billingAddress?: {
      street: string | null;
      city: string | null;
      postalCode: string | null;
      country: string | null;
    };
  }>;
  invoices: Array<{
    sourceId: string;
    accountSourceId: string;
    number: string;
    issuedDate: string;
    dueDate: string;
    totalAmount: string;
    taxAmount: string;
    paidAmount: string | null;
  }>;
  creditNotes: Array<{
    sourceId: string;
    accountSourceId: string;
    number: string;
    issuedDate: string;
    totalAmount: string;
    taxAmount: string;
  }>;
  skippedRows: number;
}

/** Per system: which amount of which file a re-export changes, and what it then is. */
interface Case {
  system: string;
  /** Files of the folder that match no kind, named as ignored. */
  ignored?: string[];
  reexport: {
    file: string;
    from: string;
    to: string;
    document: string;
    totalAmount: string;
    /** Files of the export dropped again as they are with the changed one (an export of several files). */
    with?: string[];
    /** The document's due date after the re-export, when it changes. */
    dueDate?: string;
  };
}

const CASES: Case[] = [
  {
    system: 'stripe',
    ignored: ['unified_customers.csv'],
    reexport: {
      file: 'invoices.csv',
      from: ',10000.00,10000.00,0.00,',
      to: ',10000.00,10000.00,2500.00,',
      document: 'in_1R3Gg8Qj3RsT6vWx7YzAbCdE',
      totalAmount: '10000.00',
    },
  },
  {
    system: 'xero',
    reexport: {
      file: 'Invoices.csv',
      from: ',1440.00,0.00,500.00,940.00,',
      to: ',1440.00,0.00,1440.00,0.00,',
      document: 'INV-0102',
      totalAmount: '1440.00',
    },
  },
  {
    system: 'quickbooks-online',
    reexport: {
      file: 'Invoice_List_by_Date.csv',
      from: '"3,400.00","1,400.00"',
      to: '"3,400.00",0.00',
      document: '1044',
      totalAmount: '3400.00',
    },
  },
  {
    system: 'datev-erp',
    reexport: {
      file: 'Rechnungen.csv',
      from: '4.105,50;2.000,00;2.105,50',
      to: '4.105,50;4.105,50;0,00',
      document: 'RE-2026-0002',
      totalAmount: '4105.50',
    },
  },
  {
    system: 'dolibarr',
    reexport: {
      file: 'export_facture_2.csv',
      from: ',1,2026-02-02 12:00:00,1500.00000000,',
      to: ',1,2026-02-02 12:00:00,1600.00000000,',
      document: '103',
      totalAmount: '4356.00',
    },
  },
  {
    // No paid amount in the audit trail, and amounts are frozen once a document is created: what a
    // re-export can change is a due date. Dunmore's payment terms go from 14 to 30 days in the
    // customer file (column AD), dropped with the unchanged audit trail: INV1004 is due later.
    system: 'sage-50',
    reexport: {
      file: 'CUSTOMERS.CSV',
      from: ',0.00,14,1,',
      to: ',0.00,30,1,',
      with: ['AUDIT.CSV'],
      document: 'INV1004',
      totalAmount: '380.00',
      dueDate: '2026-02-21',
    },
  },
  {
    system: 'excel',
    reexport: {
      file: 'invoices.csv',
      from: ',4000,340,4340,0,USD',
      to: ',4000,340,4340,4340,USD',
      document: 'INV-2026-026',
      totalAmount: '4340.00',
    },
  },
];

const same = (a: string | null | undefined, b: string | null | undefined): boolean =>
  a === b || (a != null && b != null && parseDecimal(a) === parseDecimal(b));
const iso = (d: DateParts | null): string | null =>
  d === null ? null : `${d.year}-${String(d.month).padStart(2, '0')}-${String(d.day).padStart(2, '0')}`;

/**
 * Points `env`'s configuration at one CSV source `id` with the settings of a fixture folder's
 * `source.yaml` (the worked example of docs/sources-csv.md), over the env's drop folder.
 */
function configureSource(env: SyncEnv, id: string, folder: string): void {
  const source = parseYaml(readFileSync(join(folder, 'source.yaml'), 'utf8')) as Record<string, unknown>;
  mkdirSync(env.dropDir, { recursive: true });
  writeFileSync(
    env.configFile,
    stringifyYaml({
      state: { dataDir: join(env.dir, 'data') },
      sources: [{ id, type: 'csv', dropDir: env.dropDir, stableSeconds: 0, ...source }],
    }),
  );
}

describe('real billing exports, synced with configuration alone', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
  });
  afterAll(() => sandbox?.close());

  it('when an export is synced with --dry-run, then its first rows are shown as the configuration reads them, before the plan, and nothing moves', async () => {
    const folder = join(FIXTURES, 'datev-erp');
    // A sandbox of its own: the DATEV case below syncs the same keys into the shared one.
    const own = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    const env = syncEnv(own, 'postgres');
    try {
      configureSource(env, 'erp', folder);
      for (const file of ['Kunden.csv', 'Rechnungen.csv'])
        copyFileSync(join(folder, file), join(env.dropDir, file));
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--dry-run'], {
        env: env.env,
      });
      expect(result.code, result.stderr).toBe(0);
      const out = result.stdout;
      expect(out).toContain('erp: Rechnungen.csv reads as (its first rows):');
      expect(out).toContain(
        'line 2: invoice RE-2026-0001 (number RE-2026-0001, account 10001): total 1428.00, tax 228.00, paid 1428.00, issued 2026-01-12, due 2026-02-11',
      );
      expect(out).toContain('line 2: account 10001: "Müller GmbH", EUR, München, DE');
      // Past the first rows, the first record of another kind: the credit note on line 5.
      expect(out).toContain(
        'line 5: credit note GS-2026-0001 (number GS-2026-0001, account 10001): total 238.00, tax 38.00, issued 2026-01-23',
      );
      expect(out.indexOf('reads as')).toBeLessThan(out.indexOf('Plan for erp'));
      expect(readdirSync(env.dropDir).sort()).toEqual(['Kunden.csv', 'Rechnungen.csv']);
    } finally {
      await env.cleanup();
      await own.close();
    }
  });

  it('when rows of an export hold values its format cannot read, then each fails naming its line, the column as the file writes it, the value and the expected form, and the others sync', async () => {
    const folder = join(FIXTURES, 'datev-erp');
    // A sandbox of its own: the DATEV case below syncs the same keys into the shared one.
    const own = await startTestSandbox({ rateLimit: { quota: 100_000, windowSeconds: 60 } });
    const env = syncEnv(own, 'postgres');
    try {
      configureSource(env, 'erp', folder);
      copyFileSync(join(folder, 'Kunden.csv'), join(env.dropDir, 'Kunden.csv'));
      const text = readFileSync(join(folder, 'Rechnungen.csv')).toString('latin1');
      // Line 3 (RE-2026-0002): a date of no calendar; line 4 (RE-2026-0003): an amount written the English way.
      const broken = text
        .replace('RE-2026-0002;15.01.2026', 'RE-2026-0002;32.01.2026')
        .replace('15.232,00', '15,232.00');
      writeFileSync(join(env.dropDir, 'Rechnungen.csv'), Buffer.from(broken, 'latin1'));
      const result = await runCli(['--config', env.configFile, 'sync', '--once'], { env: env.env });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stdout).toContain(
        'Rechnungen.csv, line 3, Rechnungsdatum (issuedDate): RE-2026-0002: not a date in the form dd.MM.yyyy (format.dateFormat): "32.01.2026"',
      );
      expect(result.stdout).toContain(
        'Rechnungen.csv, line 4, Brutto (totalAmount): RE-2026-0003: not an amount in the form 1.234,56: "15,232.00" (it reads with "." as the decimal separator: check format.decimalSeparator)',
      );
      expect(result.stdout).toMatch(/invoices\s+created 2, updated 0, unchanged 0, failed 2/);

      // The report of those rows, corrected and dropped back as it is (UTF-8 and commas, whatever
      // the export's own format), syncs them.
      const day = readdirSync(join(env.dropDir, 'archive'))[0]!;
      const report = readFileSync(join(env.dropDir, 'archive', day, 'Rechnungen.csv.errors.csv'), 'utf8');
      expect(report.split('\n')[0]).toMatch(
        /^errors\.line,errors\.column,errors\.reason,Belegart,Rechnungsnummer,/,
      );
      writeFileSync(
        join(env.dropDir, 'Rechnungen-fixed.csv.errors.csv'),
        report.replace(',32.01.2026,', ',15.01.2026,').replace(',"15,232.00",', ',"15.232,00",'),
      );
      const fixed = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      expect(fixed.code, fixed.stdout).toBe(0);
      expect(lastJsonLine(fixed.stdout).invoices).toMatchObject({ created: 2, failed: 0 });
    } finally {
      await env.cleanup();
      await own.close();
    }
  });

  describe.each(CASES)('$system', (c) => {
    let env: SyncEnv;
    const folder = join(FIXTURES, c.system);
    const expected = JSON.parse(readFileSync(join(folder, 'expected.json'), 'utf8')) as Expected;
    const exportFiles = readdirSync(folder).filter((f) => /\.csv$/i.test(f));
    const sync = async () => {
      const result = await runCli(['--config', env.configFile, 'sync', '--once', '--json'], { env: env.env });
      return { ...result, json: lastJsonLine(result.stdout) };
    };
    const drop = (file: string, text?: Buffer) =>
      text
        ? writeFileSync(join(env.dropDir, file), text)
        : copyFileSync(join(folder, file), join(env.dropDir, file));
    /** What the sandbox holds of this source's connection, by sourceId. */
    const held = () => {
      const store = sandbox.deps.store;
      const accounts = [...store.accounts.values()].filter((a) => a.source?.connectionId === c.system);
      const ids = new Map(accounts.map((a) => [a.id, a.source!.sourceId]));
      const documents = [...store.documents.values()].filter((d) => ids.has(d.accountId) && d.sourceId);
      return { accounts, documents, accountKeyOf: (id: string) => ids.get(id) };
    };

    beforeAll(() => {
      env = syncEnv(sandbox, 'postgres');
      configureSource(env, c.system, folder);
    });
    afterAll(() => env?.cleanup());

    it('when its export is dropped, then every account, invoice and credit note is in the service as the export says, the rest skipped and counted', async () => {
      for (const file of exportFiles) drop(file);
      const result = await sync();
      expect(result.code, result.stderr).toBe(0);
      expect(result.json.accounts).toMatchObject({ created: expected.accounts.length, failed: 0 });
      expect(result.json.invoices).toMatchObject({ created: expected.invoices.length, failed: 0 });
      expect(result.json.creditNotes).toMatchObject({ created: expected.creditNotes.length, failed: 0 });
      expect(result.json.skippedRows).toBe(expected.skippedRows);
      expect(result.json.rejectedFiles).toEqual([]);
      expect(result.json.ignoredFiles).toEqual(c.ignored ?? []);

      const { accounts, documents, accountKeyOf } = held();
      for (const want of expected.accounts) {
        const got = accounts.find((a) => a.source?.sourceId === want.sourceId);
        expect(got, `account ${want.sourceId}`).toBeDefined();
        expect({ fullName: got!.fullName, currencyCode: got!.currencyCode }).toEqual({
          fullName: want.fullName,
          currencyCode: want.currencyCode,
        });
        if (want.billingAddress)
          expect(got!.billingAddress, `address of ${want.sourceId}`).toMatchObject(want.billingAddress);
      }
      const check = (
        kind: 'invoice' | 'creditNote',
        want: Expected['invoices'][number] | Expected['creditNotes'][number],
      ) => {
        const got = documents.find((d) => d.kind === kind && d.sourceId === want.sourceId);
        expect(got, `${kind} ${want.sourceId}`).toBeDefined();
        const where = `${kind} ${want.sourceId}`;
        expect(got!.number, where).toBe(want.number);
        expect(accountKeyOf(got!.accountId), where).toBe(want.accountSourceId);
        expect(iso(got!.issuedDate), where).toBe(want.issuedDate);
        expect(same(got!.totalAmount, want.totalAmount), `${where} total ${got!.totalAmount}`).toBe(true);
        expect(same(got!.taxAmount, want.taxAmount), `${where} tax ${got!.taxAmount}`).toBe(true);
        if ('dueDate' in want) {
          expect(iso(got!.dueDate), where).toBe(want.dueDate);
          expect(same(got!.paidAmount, want.paidAmount ?? '0'), `${where} paid ${got!.paidAmount}`).toBe(
            true,
          );
        }
      };
      for (const want of expected.invoices) check('invoice', want);
      for (const want of expected.creditNotes) check('creditNote', want);
      expect(documents.filter((d) => d.kind === 'invoice')).toHaveLength(expected.invoices.length);
      expect(documents.filter((d) => d.kind === 'creditNote')).toHaveLength(expected.creditNotes.length);
    });

    it('when the same export is dropped again, then nothing is written', async () => {
      for (const file of exportFiles) if (!(c.ignored ?? []).includes(file)) drop(file);
      const result = await sync();
      expect(result.code, result.stderr).toBe(0);
      for (const kind of ['accounts', 'invoices', 'creditNotes'] as const)
        expect(result.json[kind], kind).toMatchObject({ created: 0, updated: 0, failed: 0 });
    });

    it('when a re-export changes one amount (or due date), then that document alone is updated', async () => {
      const { file, from, to, document, totalAmount } = c.reexport;
      const bytes = readFileSync(join(folder, file));
      const text = bytes.toString('latin1');
      expect(text.includes(from), `${file} holds ${from}`).toBe(true);
      drop(file, Buffer.from(text.replace(from, to), 'latin1'));
      for (const other of c.reexport.with ?? []) drop(other);
      const result = await sync();
      expect(result.code, result.stderr).toBe(0);
      expect(result.json.invoices).toMatchObject({ created: 0, updated: 1, failed: 0 });
      expect(result.json.accounts).toMatchObject({ created: 0, updated: 0, failed: 0 });
      expect(result.json.creditNotes).toMatchObject({ created: 0, updated: 0, failed: 0 });
      const changed = held().documents.find((d) => d.sourceId === document);
      expect(same(changed?.totalAmount, totalAmount)).toBe(true);
      if (c.reexport.dueDate) expect(iso(changed?.dueDate ?? null)).toBe(c.reexport.dueDate);
    });
  });
});
