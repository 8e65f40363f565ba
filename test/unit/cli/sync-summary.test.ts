import { describe, expect, it } from 'vitest';
import { jsonSummary, minuteText, skippedFileLines, textSummary } from '../../../src/cli/sync-summary.js';
import type { SourceSummary } from '../../../src/sync/run-sync.js';

const zero = { created: 0, updated: 0, unchanged: 0, failed: 0 };

function summary(over: Partial<SourceSummary>): SourceSummary {
  return {
    sourceId: 'erp-csv',
    runId: '1',
    counts: { accounts: zero, invoices: zero, creditNotes: zero },
    plan: [],
    failures: [],
    abandoned: [],
    warnings: [],
    skipped: [],
    ...over,
  };
}

describe('the pass summary of skipped files', () => {
  const syncedAt = new Date(2026, 10, 24, 10, 2, 31);

  it('when files repeat a file synced before, then one line per original says how many were skipped and when it was synced', () => {
    const lines = skippedFileLines([
      summary({
        counts: {
          accounts: { ...zero, unchanged: 6 },
          invoices: { ...zero, unchanged: 4 },
          creditNotes: zero,
        },
        skipped: [
          { unit: 'accounts-2026-11-01.csv', duplicateOf: { name: 'accounts-2026-11-01.csv', syncedAt } },
          { unit: 'accounts-copy.csv', duplicateOf: { name: 'accounts-2026-11-01.csv', syncedAt } },
          { unit: 'accounts-copy-2.csv', duplicateOf: { name: 'accounts-2026-11-01.csv', syncedAt } },
          { unit: 'invoices.csv', duplicateOf: { name: 'invoices.csv', syncedAt } },
        ],
      }),
    ]);
    expect(lines).toEqual([
      '3 files skipped: same content as accounts-2026-11-01.csv (synced 2026-11-24 10:02): ' +
        'accounts-2026-11-01.csv, accounts-copy.csv, accounts-copy-2.csv',
      '1 file skipped: same content as invoices.csv (synced 2026-11-24 10:02)',
    ]);
  });

  it('when a file was skipped, then the text report shows its rows unchanged and the skipped-file line', () => {
    const summaries = [
      summary({
        counts: { accounts: { ...zero, unchanged: 2 }, invoices: zero, creditNotes: zero },
        skipped: [{ unit: 'accounts.csv', duplicateOf: { name: 'accounts.csv', syncedAt } }],
      }),
    ];
    const text = textSummary(summaries, jsonSummary(summaries, { requests: 0, rateLimited: 0 }, 120), false);
    expect(text).toContain('accounts      created 0, updated 0, unchanged 2, failed 0');
    expect(text).toContain(`1 file skipped: same content as accounts.csv (synced ${minuteText(syncedAt)})`);
    expect(
      textSummary([summary({})], jsonSummary([], { requests: 0, rateLimited: 0 }, 1), false),
    ).not.toContain('skipped');
  });
});

describe("the --json summary of units' warnings", () => {
  it('when a file was put back because it changed after its claim, then --json names it with the warning, as the text does', () => {
    const warning =
      'changed while it was being synced (it grew from 1834 to 7282 bytes after it was claimed)';
    const json = jsonSummary(
      [summary({ warnings: [{ unit: 'invoices.csv', warning }] })],
      { requests: 0, rateLimited: 0 },
      1,
    );
    expect(json.warnings).toEqual([{ sourceId: 'erp-csv', unit: 'invoices.csv', warning }]);
    expect(textSummary([summary({ warnings: [{ unit: 'invoices.csv', warning }] })], json, false)).toContain(
      `erp-csv: invoices.csv: warning: ${warning}`,
    );
  });

  it('when no unit warned, then --json has no warnings key (the line keeps its form)', () => {
    expect(jsonSummary([summary({})], { requests: 0, rateLimited: 0 }, 1)).not.toHaveProperty('warnings');
  });
});

describe('the pass summary of a cancelled pass', () => {
  it('when a user cancelled a pass, then the text report says by whom and that the rest waits, and --json lists it', () => {
    const summaries = [
      summary({
        counts: { accounts: { ...zero, created: 500 }, invoices: zero, creditNotes: zero },
        cancelled: 'ada',
      }),
      summary({ sourceId: 'billing-db' }),
    ];
    const json = jsonSummary(summaries, { requests: 500, rateLimited: 0 }, 9_000);
    expect(json.cancelled).toEqual([{ sourceId: 'erp-csv', by: 'ada' }]);
    const text = textSummary(summaries, json, false);
    expect(text).toContain('accounts      created 500, updated 0, unchanged 0, failed 0');
    expect(text).toContain(
      'erp-csv: cancelled by ada before a batch: what it had done is counted above, the rest waits for the next pass',
    );
    expect(text).not.toContain('billing-db: cancelled');
    expect(jsonSummary([summary({})], { requests: 0, rateLimited: 0 }, 1)).not.toHaveProperty('cancelled');
  });
});
