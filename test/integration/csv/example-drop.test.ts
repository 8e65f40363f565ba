import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/domain/clock.js';
import { createLogger } from '../../../src/logging/logger.js';
import { createCsvSource } from '../../../src/sources/csv/csv-source.js';
import { InMemoryDropFileLedger } from '../../../src/sources/ports.js';

const SAMPLE = fileURLToPath(new URL('../../../examples/drop', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'example-drop-'));
  await cp(SAMPLE, dir, { recursive: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the sample drop folder (examples/drop)', () => {
  it('when it is synced, then every row is valid: 8 accounts, 12 invoices (2 with a PDF), 3 credit notes', async () => {
    const source = createCsvSource({
      config: {
        id: 'erp-csv',
        type: 'csv',
        dropDir: dir,
        stableSeconds: 0,
        mapping: {},
        strictColumns: false,
      },
      clock: new ManualClock(),
      logger: createLogger({ level: 'silent' }),
      ledger: new InMemoryDropFileLedger(),
    });
    const seen: Array<[string, number, number, number]> = [];
    for await (const unit of source.units()) {
      let records = 0;
      let rejected = 0;
      let pdfs = 0;
      for await (const batch of unit.batches()) {
        records += batch.records.length;
        rejected += batch.rejected.length;
        pdfs += batch.records.filter((r) => r.record.kind !== 'account' && r.record.file !== null).length;
      }
      await unit.complete({ failures: [] });
      seen.push([unit.name, records, rejected, pdfs]);
    }
    expect(seen).toEqual([
      ['accounts.csv', 8, 0, 0],
      ['invoices.csv', 12, 0, 2],
      ['credit-notes.csv', 3, 0, 0],
    ]);
  });
});
