import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/events.js';
import { PassWatch } from '../../../src/alerts/pass-watch.js';
import type { SourceHealthStore } from '../../../src/alerts/ports.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { createLogger } from '../../../src/logging/logger.js';

const REASON = 'the header was read as one cell, and it holds ";"';

/** A store answering what a run opened; it records which runs were asked about. */
function storeOf(opened: { failures: number; files: Array<{ file: string; reason: string }> }) {
  const asked: string[] = [];
  const store: SourceHealthStore = {
    failedRunStreak: async () => ({ count: 0, lastError: null }),
    newFailuresOf: async (_sourceId, runId) => {
      asked.push(runId);
      return opened.failures;
    },
    newRejectedFilesOf: async () => opened.files,
    pauseAutomatically: async () => false,
  };
  return { store, asked };
}

function watchOf(store: SourceHealthStore, threshold = 10) {
  const told: AlertEvent[] = [];
  const watch = new PassWatch({
    store,
    alerts: { notify: (event) => told.push(event) },
    settings: { newFailuresThreshold: threshold, pauseAfterFailedRuns: 0 },
    logger: createLogger({ level: 'silent' }),
    clock: new ManualClock('2026-11-24T10:00:00.000Z'),
  });
  return { watch, told };
}

describe('the pass watch and the files a run could not read', () => {
  it('when a run could not read a file, then run.new-failures names it with why, whatever the threshold', async () => {
    const { store } = storeOf({ failures: 1, files: [{ file: 'invoices.csv', reason: REASON }] });
    const { watch, told } = watchOf(store);
    await watch.passEnded('erp-csv', [{ runId: '7', failed: 0, rejectedFiles: 1 }]);
    expect(told).toEqual([
      expect.objectContaining({
        type: 'run.new-failures',
        sourceId: 'erp-csv',
        summary:
          `erp-csv: run #7 could not read invoices.csv: ${REASON} (set aside in the drop folder's rejected/: ` +
          "fix it, or the source's configuration, and drop it again); 1 new failure in all: " +
          '`receivables-sync failures --source erp-csv` lists them',
        details: {
          runId: '7',
          newFailures: 1,
          threshold: 10,
          rejectedFiles: 1,
          files: 'invoices.csv',
          reason: REASON,
        },
      }),
    ]);
  });

  it('when the same file is rejected again while its failure is open, then nothing is told (it is not new)', async () => {
    const { store, asked } = storeOf({ failures: 0, files: [] });
    const { watch, told } = watchOf(store);
    await watch.passEnded('erp-csv', [{ runId: '8', failed: 0, rejectedFiles: 1 }]);
    expect(asked).toEqual(['8']);
    expect(told).toEqual([]);
  });

  it('when a run read every file and failed few rows, then the store is not even asked', async () => {
    const { store, asked } = storeOf({ failures: 3, files: [] });
    const { watch, told } = watchOf(store);
    await watch.passEnded('erp-csv', [{ runId: '9', failed: 3, rejectedFiles: 0 }]);
    expect(asked).toEqual([]);
    expect(told).toEqual([]);
  });

  it('when a name holds control characters, then the alert shows them escaped, on one line', async () => {
    const { store } = storeOf({
      failures: 2,
      files: [
        { file: 'a\nb.csv', reason: 'x' },
        { file: 'c.csv', reason: 'y' },
      ],
    });
    const { watch, told } = watchOf(store);
    await watch.passEnded('erp-csv', [{ runId: '10', failed: 0, rejectedFiles: 2 }]);
    expect(told[0]?.summary).toContain('run #10 could not read 2 files (set aside');
    expect(told[0]?.details).toMatchObject({ rejectedFiles: 2, files: 'a\\nb.csv, c.csv' });
  });
});
