import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SourceRecord } from '../../../src/domain/records.js';
import { createModuleSource, type ModuleSourceError } from '../../../src/sources/module/index.js';
import { InMemoryCursorStore } from '../../../src/sources/ports.js';
import type { Source, SourceBatch } from '../../../src/sources/source.js';

const logger = pino({ level: 'silent' });
const EXAMPLE = resolve('examples/module-source/json-file-source.js');

async function drain(source: Source) {
  const records: SourceRecord[] = [];
  const rejected: SourceBatch['rejected'] = [];
  const units: string[] = [];
  for await (const unit of source.units()) {
    units.push(`${unit.stream}:${unit.name}`);
    for await (const batch of unit.batches()) {
      records.push(...batch.records.map((r) => r.record));
      rejected.push(...batch.rejected);
    }
    await unit.complete({ failures: [] });
  }
  return { records, rejected, units };
}

describe('module source', () => {
  let dir: string;
  const write = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const moduleSource = (
    module: string,
    options: Record<string, unknown> = {},
    cursors = new InMemoryCursorStore(),
  ) => createModuleSource({ config: { id: 'custom', module, options }, cursors, logger, baseDir: dir });
  const failure = (source: Source) =>
    drain(source).then(
      () => null,
      (error: unknown) => error as ModuleSourceError,
    );

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rs-module-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when the example module runs, then its records come out typed, in stream order, and its cursor skips unchanged data', async () => {
    const cursors = new InMemoryCursorStore();
    const source = createModuleSource({
      config: { id: 'json-example', module: EXAMPLE, options: {} },
      cursors,
      logger,
    });
    const first = await drain(source);
    expect(first.rejected).toEqual([]);
    expect(first.units.map((u) => u.split(':')[0])).toEqual(['accounts', 'invoices', 'creditNotes']);
    expect(first.records.map((r) => `${r.kind}:${r.sourceId}`)).toEqual([
      'account:C-100',
      'account:C-101',
      'account:C-102',
      'invoice:F-2026-001',
      'invoice:F-2026-002',
      'invoice:F-2026-003',
      'creditNote:A-2026-001',
    ]);
    expect(first.records[0]).toEqual({
      kind: 'account',
      sourceId: 'C-100',
      fullName: 'Boulangerie Dupont',
      currencyCode: 'EUR',
      billingAddress: { street: '12 rue de la Paix', city: 'Paris', postalCode: '75002', country: 'FR' },
      tags: ['bakery', 'vip'],
      updatedAt: null,
    });
    expect(first.records[2]).toMatchObject({
      billingAddress: { city: 'London', country: 'GB', street: null },
    });
    expect(first.records[4]).toMatchObject({
      issuedDate: { year: 2026, month: 1, day: 9 },
      paidAmount: '100.00',
      totalAmount: '480.50',
      file: null,
    });
    expect(await cursors.get('json-example', 'invoices')).toMatchObject({ records: 3 });

    expect((await drain(source)).units).toEqual([]);
    await cursors.reset('json-example', 'invoices');
    expect((await drain(source)).units.map((u) => u.split(':')[0])).toEqual(['invoices']);
  });

  it('when a module yields records that break the contract, then they are refused with the CSV reasons, the rest go on', async () => {
    mkdirSync(join(dir, 'pdf'), { recursive: true });
    writeFileSync(join(dir, 'pdf', 'ok.pdf'), '%PDF-1.4\n%%EOF\n');
    const path = write(
      'mixed.mjs',
      `export default () => ({
        units: () => [{
          stream: 'invoices',
          batches: () => [{
            records: [
              { sourceId: 'I-1', accountSourceId: 'A', number: '1', issuedDate: new Date('2026-01-02T00:00:00Z'),
                dueDate: '2026-02-30', totalAmount: 0.1 + 0.2, taxAmount: '0' },
              { record: { kind: 'account', sourceId: 'I-2' }, origin: { file: 'crm', line: 7 } },
              { sourceId: 'I-3', accountSourceId: 'A', number: '3', issuedDate: '2026-01-02', dueDate: '2026-02-01',
                totalAmount: 10, taxAmount: '0', file: 'pdf/ok.pdf' },
              { sourceId: 'I-4', accountSourceId: 'A', number: '4', issuedDate: '2026-01-02', dueDate: '2026-02-01',
                totalAmount: '10', taxAmount: '0', file: 'pdf/missing.pdf' },
              'not a record',
            ],
            rejected: [{ sourceKey: 'I-9', reason: 'no customer' }],
          }],
        }],
      })`,
    );
    const { records, rejected } = await drain(moduleSource(path));
    expect(records).toEqual([
      expect.objectContaining({ sourceId: 'I-3', totalAmount: '10', file: join(dir, 'pdf', 'ok.pdf') }),
    ]);
    expect(rejected).toEqual([
      expect.objectContaining({
        kind: 'invoice',
        sourceKey: 'I-1',
        column: 'dueDate; totalAmount',
        reason:
          'dueDate: not a calendar date: "2026-02-30"; totalAmount: has 17 decimals, more than the 6 kept (and the digits past them are not zeros): "0.30000000000000004"',
      }),
      expect.objectContaining({
        sourceKey: 'I-2',
        file: 'crm',
        line: 7,
        reason: 'a record of kind "account" in the invoices stream',
      }),
      expect.objectContaining({
        sourceKey: 'I-4',
        column: 'file',
        reason: 'file not found: "pdf/missing.pdf"',
      }),
      expect.objectContaining({
        sourceKey: 'custom/invoices#5',
        reason: 'a record must be an object, got string "not a record"',
      }),
      { kind: 'invoice', sourceKey: 'I-9', reason: 'no customer' },
    ]);
  });

  it('when an account record is deleted, then it is handed on as a tombstone even with only its key', async () => {
    const path = write(
      'tombstone.mjs',
      `export const createSource = async () => ({
        async *units() { yield { stream: 'accounts', async *batches() { yield { records: [{ sourceId: 'C-9', deleted: true }] }; } }; },
      });`,
    );
    const { records } = await drain(moduleSource(path));
    expect(records).toEqual([expect.objectContaining({ kind: 'account', sourceId: 'C-9', deleted: true })]);
  });

  it('when a TypeScript module is given, then it is loaded and its options and context reach the factory', async () => {
    write(
      'typed.ts',
      `interface Options { name: string }
      export default function create(options: Options, context: { sourceId: string }) {
        return { units: async function* () {
          yield { stream: 'accounts' as const, batches: () => [{ records: [{ sourceId: context.sourceId, fullName: options.name, currencyCode: 'EUR' }] }] };
        } };
      }`,
    );
    const { records } = await drain(moduleSource('./typed.ts', { name: 'From TS' }));
    expect(records).toEqual([expect.objectContaining({ sourceId: 'custom', fullName: 'From TS' })]);
  });

  it('when the module is missing, exports no source, throws, or yields malformed units, then the error names the fix', async () => {
    const missing = await failure(moduleSource('./nope.js'));
    expect(missing?.code).toBe('MODULE_SOURCE_NOT_FOUND');
    expect(missing?.message).toContain('source "custom": module ./nope.js cannot be found');

    const empty = await failure(moduleSource(write('empty.mjs', 'export const x = 1;')));
    expect(empty?.code).toBe('MODULE_SOURCE_INVALID');
    expect(empty?.message).toMatch(/exports x; it must default-export a factory \(options, context\)/);

    const wrongReturn = await failure(moduleSource(write('wrong.mjs', 'export default () => 42;')));
    expect(wrongReturn?.code).toBe('MODULE_SOURCE_INVALID');
    expect(wrongReturn?.message).toContain('its factory returned number 42');

    const throws = await failure(
      moduleSource(write('throws.mjs', "export default () => { throw new Error('no token'); };")),
    );
    expect(throws?.code).toBe('MODULE_SOURCE_FAILED');
    expect(throws?.message).toContain('its factory threw: no token');

    const badStream = await failure(
      moduleSource(
        write('stream.mjs', "export default { units: () => [{ stream: 'payments', batches: () => [] }] };"),
      ),
    );
    expect(badStream?.code).toBe('MODULE_UNIT_INVALID');
    expect(badStream?.message).toContain('one of accounts, invoices, creditNotes, got string "payments"');

    const badBatch = await failure(
      moduleSource(
        write(
          'batch.mjs',
          "export default { units: () => [{ stream: 'accounts', batches: () => [[{ sourceId: 'x' }]] }] };",
        ),
      ),
    );
    expect(badBatch?.code).toBe('MODULE_UNIT_INVALID');
    expect(badBatch?.message).toContain(
      'custom/accounts: a batch must be an object { records: [...], rejected?: [...] }, got an array',
    );
  });
});
