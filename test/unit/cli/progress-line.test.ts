import { describe, expect, it } from 'vitest';
import { emptyLimiterStats, type RateLimiterStats } from '../../../src/api/rate-limit/types.js';
import { ProgressLine } from '../../../src/cli/progress.js';

/** A stream that says it is (or is not) a terminal and keeps what is drawn. */
function screen(isTTY: boolean, columns = 200) {
  const writes: string[] = [];
  const stream = { isTTY, columns, write: (s: string) => writes.push(s) > 0 };
  const lastLine = () => (writes.at(-1) ?? '').replace('\r\x1b[2K', '');
  return { writes, lastLine, stream: stream as unknown as NodeJS.WriteStream };
}

describe('ProgressLine', () => {
  it('when a second file starts, then the line counts that file alone, under its name', () => {
    let now = 0;
    const out = screen(true);
    const progress = new ProgressLine({ stream: out.stream, now: () => (now += 1000) });
    progress.onEvent({ type: 'unit', name: 'accounts.csv', expectedRecords: 3 });
    progress.onEvent({ type: 'records', read: 3, rejected: 0 });
    for (let i = 0; i < 3; i++) progress.onEvent({ type: 'outcome', kind: 'account', outcome: 'created' });
    progress.onEvent({ type: 'unit', name: 'invoices.csv', expectedRecords: 5 });
    progress.onEvent({ type: 'records', read: 4, rejected: 1 });
    progress.onEvent({ type: 'outcome', kind: 'invoice', outcome: 'failed' });
    expect(out.lastLine()).toBe('invoices.csv: 5 of ~5 rows read, 1 done, 1 failed');
    progress.finish();
  });

  it('when the rate limiter holds requests back, then the line says so with the time left, and the ETA from the quota', () => {
    let now = 1_000_000;
    let stats: RateLimiterStats = { ...emptyLimiterStats(), policy: { quota: 300, windowSeconds: 60 } };
    const out = screen(true);
    const progress = new ProgressLine({ stream: out.stream, limiter: () => stats, now: () => now });
    progress.onEvent({ type: 'unit', name: 'accounts.csv', expectedRecords: 1_300 });
    stats = {
      ...stats,
      waitedMsTotal: 90_000,
      heldMs: 12_000,
      waiting: { calls: 8, resumesAt: now + 12_000 },
    };
    expect(progress.snapshot()).toMatchObject({ resumesInMs: 12_000, waitedMs: 12_000, etaMs: 260_000 });
    now += 200; // the line is redrawn at most every 100 ms
    stats = { ...stats, waiting: { calls: 8, resumesAt: now + 12_000 } };
    progress.onEvent({ type: 'records', read: 500, rejected: 0 });
    expect(out.lastLine()).toBe(
      'accounts.csv: 500 of ~1,300 rows read, 0 done, 0 failed | waiting for the rate limit, resumes in 12 s | ETA ~4 min',
    );
    progress.finish();
  });

  it('when the terminal does not tell its width (0 columns, as under `script`), then the line is not cut', () => {
    let now = 0;
    const out = screen(true, 0);
    const progress = new ProgressLine({ stream: out.stream, now: () => (now += 1000) });
    progress.onEvent({ type: 'unit', name: 'accounts.csv', expectedRecords: 3 });
    progress.onEvent({ type: 'records', read: 3, rejected: 0 });
    progress.onEvent({ type: 'outcome', kind: 'account', outcome: 'failed' });
    expect(out.lastLine()).toBe('accounts.csv: 3 of ~3 rows read, 1 done, 1 failed');
    progress.finish();
  });

  it('when stderr is not a terminal, then nothing is drawn', () => {
    const out = screen(false);
    const progress = new ProgressLine({ stream: out.stream });
    progress.onEvent({ type: 'unit', name: 'accounts.csv' });
    progress.onEvent({ type: 'records', read: 3, rejected: 0 });
    progress.finish();
    expect(out.writes).toEqual([]);
  });
});
