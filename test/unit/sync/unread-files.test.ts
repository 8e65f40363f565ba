import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiResponseError } from '../../../src/api/errors.js';
import { type SourceConfig, sourceSchema } from '../../../src/config/schema.js';
import { AppError } from '../../../src/domain/errors.js';
import { createLogger } from '../../../src/logging/logger.js';
import { createSourceFactory } from '../../../src/sources/create-source.js';
import { InMemoryCursorStore, InMemoryDropFileLedger } from '../../../src/sources/ports.js';
import type { SourceSummary } from '../../../src/sync/run-sync.js';
import { SyncService } from '../../../src/sync/sync-service.js';
import { FakeApi, FakeState } from './fakes.js';

const silent = createLogger({ level: 'silent' });
const ACCOUNTS = 'sourceId,fullName,currencyCode\nC-1,Atelier,EUR\n';
const INVOICES =
  'sourceId,accountSourceId,number,issuedDate,dueDate,totalAmount,taxAmount\nI-1,C-1,F-1,2026-01-02,2026-02-01,12.00,2.00\n';
const CREDIT_NOTES =
  'sourceId,accountSourceId,number,issuedDate,totalAmount,taxAmount\nCN-1,C-1,A-1,2026-01-03,5.00,1.00\n';

/**
 * What `SyncService` does with the files a pass could not read, through the engine's ports (the
 * in-memory state): kept with the run, recorded as file-level failures, resolved once read.
 */
describe('the files a pass could not read', () => {
  let dir: string;
  let api: FakeApi;
  let state: FakeState;
  let service: SyncService;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rs-unread-'));
    api = new FakeApi();
    state = new FakeState();
    const config: SourceConfig = sourceSchema.parse({
      id: 'erp',
      type: 'csv',
      dropDir: dir,
      stableSeconds: 0,
    });
    service = new SyncService({
      sources: [config],
      api,
      state,
      logger: silent,
      sourceFactory: createSourceFactory({
        logger: silent,
        cursors: new InMemoryCursorStore(),
        ledger: new InMemoryDropFileLedger(),
        env: {},
      }),
    });
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  const drop = async (name: string, content: string) => {
    await writeFile(join(dir, name), content);
    const past = new Date(Date.now() - 60_000);
    await utimes(join(dir, name), past, past);
  };
  const fileFailures = () => [...state.failureRows.values()].filter((f) => f.stage === 'file');

  it('when a file is rejected, then its run is partial with the file and why, and a file failure of its kind is open until it is read', async () => {
    await drop('accounts.csv', ACCOUNTS);
    await drop('invoices.csv', INVOICES.replaceAll(',', ';'));
    const [summary] = await service.syncSource('erp');
    const reason = summary!.abandoned[0]!.reason;
    expect(reason).toContain('the header was read as one cell');
    expect(state.runRows[0]).toMatchObject({
      status: 'partial',
      counts: { rejectedFiles: [{ file: 'invoices.csv', reason }] },
    });
    expect(fileFailures()).toEqual([
      expect.objectContaining({
        sourceId: 'erp',
        kind: 'invoice',
        sourceKey: 'invoices.csv',
        file: 'rejected/invoices.csv',
        message: reason,
        retryable: false,
        payload: null,
      }),
    ]);
    const retry = await service.retryFailures('erp');
    expect(retry).toEqual({
      summary: null,
      needData: 0,
      rejectedFiles: [{ file: 'invoices.csv', setAside: 'rejected/invoices.csv', reason }],
    });

    // Another file of the kind does not mend it; the same name, read to its end, does.
    await drop('invoices-2.csv', INVOICES.replace('I-1,', 'I-2,'));
    await service.syncSource('erp');
    expect(fileFailures()).toHaveLength(1);
    await drop('invoices.csv', INVOICES);
    const [fixed] = await service.syncSource('erp');
    expect(fixed!.abandoned).toEqual([]);
    expect(fileFailures()).toEqual([]);
    expect(state.runRows.at(-1)).toMatchObject({ status: 'succeeded' });
    expect(state.runRows.at(-1)?.counts).not.toHaveProperty('rejectedFiles');
  });

  it('when the name of a rejected file is taken in rejected/, then its failure names where it really went', async () => {
    await drop('invoices.csv', 'sourceId;accountSourceId\nI-1;C-1\n');
    await service.syncSource('erp');
    await drop('invoices.csv', 'sourceId;accountSourceId\nI-2;C-1\n');
    await service.syncSource('erp');
    expect(fileFailures().map((f) => f.file)).toContain('rejected/invoices~2.csv');
  });

  it('when the pass stops on a fault after a file was rejected, then that file is recorded all the same', async () => {
    await drop('accounts.csv', ACCOUNTS);
    await drop('invoices.csv', INVOICES.replaceAll(',', ';'));
    await drop('credit-notes.csv', CREDIT_NOTES);
    const down = new AppError('NETWORK_ERROR', 'the API is down');
    api.faults.set('findDocumentsBySourceIds', down);
    api.faults.set('createDocument', down);
    await expect(service.syncSource('erp')).rejects.toThrow('the API is down');
    expect(state.runRows[0]).toMatchObject({
      status: 'failed',
      counts: { rejectedFiles: [{ file: 'invoices.csv' }] },
    });
    expect(fileFailures().map((f) => f.sourceKey)).toEqual(['invoices.csv']);
  });

  it('when a dry run meets an unreadable file, then nothing is recorded', async () => {
    await drop('invoices.csv', INVOICES.replaceAll(',', ';'));
    const [summary] = await service.syncSource('erp', { dryRun: true });
    expect(summary!.abandoned).toHaveLength(1);
    expect(state.runRows).toEqual([]);
    expect(fileFailures()).toEqual([]);
  });

  it('when a fault stops the pass, then the fault is thrown as it was and what the pass had done goes to onStopped', async () => {
    await drop('accounts.csv', ACCOUNTS);
    await drop('invoices.csv', INVOICES.replaceAll(',', ';'));
    await drop('credit-notes.csv', CREDIT_NOTES);
    const down = new ApiResponseError({
      status: 503,
      method: 'POST',
      path: '/credit-notes',
      message: 'down',
    });
    api.faults.set('findDocumentsBySourceIds', down);
    api.faults.set('createDocument', down);
    const stopped: SourceSummary[] = [];
    const error = await service
      .syncSource('erp', { onStopped: (partial) => stopped.push(partial) })
      .catch((e: unknown) => e);
    expect(error).toBe(down);
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatchObject({ sourceId: 'erp', runId: state.runRows[0]!.id });
    expect(stopped[0]!.counts.accounts.created).toBe(1);
    expect(stopped[0]!.abandoned.map((a) => a.unit)).toEqual(['invoices.csv']);
  });
});
