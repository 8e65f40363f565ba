import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FailureInput } from '../../../src/domain/sync-state.js';
import { openStateDatabase, type StateDatabase } from '../../../src/state/database.js';
import { FailuresRepository } from '../../../src/state/failures.js';
import { dropSchema, TEST_DATABASE_URL, uniqueSchema } from '../../support/postgres.js';

const failure = (sourceKey: string, over: Partial<FailureInput> = {}): FailureInput => ({
  sourceId: 'erp-csv',
  kind: 'invoice',
  sourceKey,
  stage: 'create',
  message: 'HTTP 503',
  retryable: true,
  ...over,
});

const MINUTE = 60_000;

describe.each(['postgres', 'embedded'] as const)('failures in the %s state DB', (kind) => {
  let schema: string;
  let dataDir: string;
  let state: StateDatabase;
  let failures: FailuresRepository;
  beforeEach(async () => {
    schema = uniqueSchema('failures');
    dataDir = mkdtempSync(join(tmpdir(), 'rs-failures-'));
    state = await openStateDatabase(
      kind === 'postgres'
        ? { databaseUrl: TEST_DATABASE_URL, dataDir, schema }
        : { databaseUrl: null, dataDir },
    );
    failures = new FailuresRepository(state.db);
  });
  afterEach(async () => {
    await state.close();
    await dropSchema(schema);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const openOf = async (sourceKey: string) =>
    (await failures.open({ sourceId: 'erp-csv' })).find((f) => f.sourceKey === sourceKey);

  it('when a record fails again, then its one open failure counts the attempts and backs off 1, 2, 4 min', async () => {
    for (const [attempts, minutes] of [
      [1, 1],
      [2, 2],
      [3, 4],
    ] as const) {
      const before = Date.now();
      await failures.record(failure('INV-1', { message: `attempt ${attempts}` }));
      const open = await openOf('INV-1');
      expect(open).toMatchObject({ attempts, message: `attempt ${attempts}` });
      const delay = open!.nextRetryAt!.getTime() - before;
      expect(delay).toBeGreaterThanOrEqual(minutes * MINUTE - 1000);
      expect(delay).toBeLessThanOrEqual(minutes * MINUTE + 5000);
    }
    expect(await failures.countOpen('erp-csv')).toBe(1);
  });

  it('when the backoff would pass an hour, then it stays at an hour; a permanent failure has no retry', async () => {
    for (let i = 0; i < 40; i++) await failures.record(failure('INV-1'));
    const open = await openOf('INV-1');
    expect(open?.attempts).toBe(40);
    expect(open!.nextRetryAt!.getTime() - Date.now()).toBeGreaterThan(59 * MINUTE);
    expect(open!.nextRetryAt!.getTime() - Date.now()).toBeLessThanOrEqual(60 * MINUTE);
    await failures.record(failure('INV-1', { retryable: false, stage: 'validate' }));
    expect(await openOf('INV-1')).toMatchObject({ attempts: 41, retryable: false, nextRetryAt: null });
  });

  it('when 2,500 failures come in one call, some of them twice and some already open, then each record has one open failure with its attempts', async () => {
    await failures.record(failure('INV-7'));
    const batch = Array.from({ length: 2_500 }, (_, i) => failure(`INV-${i + 1}`, { stage: 'validate' }));
    batch.push(failure('INV-9'));
    await failures.recordMany(batch);
    expect(await failures.countOpen('erp-csv')).toBe(2_500);
    expect(await openOf('INV-7')).toMatchObject({ attempts: 2, stage: 'validate' });
    expect((await openOf('INV-9'))?.attempts).toBe(2);
    expect((await openOf('INV-2500'))?.attempts).toBe(1);
  });

  it('when a failure was resolved, then the record failing again opens a new one from its first attempt', async () => {
    await failures.record(failure('INV-1'));
    await failures.record(failure('INV-1'));
    await failures.resolve('erp-csv', 'invoice', ['INV-1']);
    expect(await failures.countOpen('erp-csv')).toBe(0);
    await failures.recordMany([failure('INV-1')]);
    expect((await openOf('INV-1'))?.attempts).toBe(1);
  });
});
