import { describe, expect, it } from 'vitest';
import { durationText, etaMs, progressText } from '../../../src/cli/progress-text.js';

describe('progress line text', () => {
  const base = { unit: 'invoices.csv', read: 412, done: 380, failed: 2, waitedMs: 0 };

  it('when a file is under way, then its own counts are shown, against its size when known', () => {
    expect(progressText({ ...base, expectedRows: 1000 })).toBe(
      'invoices.csv: 412 of ~1,000 rows read, 380 done, 2 failed',
    );
    expect(progressText(base)).toBe('invoices.csv: 412 rows read, 380 done, 2 failed');
    // An estimate that turned out short never shows fewer rows than read.
    expect(progressText({ ...base, expectedRows: 400 })).toContain('412 of ~412 rows read');
  });

  it('when the rate limit held the pass up, then the time is given in seconds; while it holds, when requests resume', () => {
    expect(progressText({ ...base, waitedMs: 471_400 })).toBe(
      'invoices.csv: 412 rows read, 380 done, 2 failed | waited 471.4 s for the rate limit',
    );
    expect(progressText({ ...base, waitedMs: 471_400, resumesInMs: 11_200 })).toBe(
      'invoices.csv: 412 rows read, 380 done, 2 failed | waiting for the rate limit, resumes in 12 s',
    );
    // A wait of a few milliseconds is not announced.
    expect(progressText({ ...base, resumesInMs: 40 })).toBe(
      'invoices.csv: 412 rows read, 380 done, 2 failed',
    );
  });

  it('when the ETA is long enough to matter, then it is shown in minutes or hours', () => {
    expect(progressText({ ...base, etaMs: 125_000 })).toBe(
      'invoices.csv: 412 rows read, 380 done, 2 failed | ETA ~2 min',
    );
    expect(progressText({ ...base, etaMs: 4_000 })).not.toContain('ETA');
    expect(durationText(45_000)).toBe('45 s');
    expect(durationText(3_900_000)).toBe('1 h 05 min');
  });

  it('when a file is skipped for its content, then the line says which file it repeats', () => {
    expect(progressText({ ...base, unit: 'accounts-again.csv', duplicateOf: { name: 'accounts.csv' } })).toBe(
      'accounts-again.csv: same content as accounts.csv, skipped',
    );
  });
});

describe('ETA', () => {
  const policy = { quota: 300, windowSeconds: 60 };

  it('when rows are left, then they take their requests at the advertised quota', () => {
    // 9,000 rows left at 1 request per row (none done yet), 5 requests per second: 30 min.
    expect(etaMs({ expectedRows: 9_000, done: 0, requests: 0, policy })).toBe(1_800_000);
    // 2 requests per row measured so far: twice as long for the 8,000 left.
    expect(etaMs({ expectedRows: 9_000, done: 1_000, requests: 2_000, policy })).toBe(3_200_000);
    // Unchanged rows cost no request: nothing left to wait for.
    expect(etaMs({ expectedRows: 9_000, done: 1_000, requests: 0, policy })).toBe(0);
  });

  it('when the size of the file or the policy is unknown, then there is no ETA', () => {
    expect(etaMs({ expectedRows: undefined, done: 0, requests: 0, policy })).toBeUndefined();
    expect(etaMs({ expectedRows: 100, done: 0, requests: 0, policy: undefined })).toBeUndefined();
  });
});
