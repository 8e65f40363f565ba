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

  it('when the API client retries a request before any file, then the line says why, the attempt and the time to the next, and goes once it is answered', () => {
    let now = 0;
    const out = screen(true);
    const progress = new ProgressLine({ stream: out.stream, now: () => now });
    const retrying = {
      type: 'retrying',
      baseUrl: 'https://api.example',
      method: 'GET',
      path: '/api/public/v1/organizations',
      maxAttempts: 8,
      code: 'NETWORK_ERROR',
    } as const;
    progress.onRetry({ ...retrying, attempt: 3, delayMs: 4_000 });
    expect(out.lastLine()).toBe(
      'the API at https://api.example is not answering (NETWORK_ERROR): attempt 3 of 8 failed, next in 4 s (GET /api/public/v1/organizations)',
    );
    now += 4_000;
    expect(progress.retrySnapshot()).toMatchObject({ nextInMs: 0 });
    progress.onRetry({ ...retrying, attempt: 4, code: 'HTTP_503', status: 503, delayMs: 600 });
    expect(out.lastLine()).toBe(
      'the API at https://api.example answered HTTP 503 (HTTP_503): attempt 5 of 8 under way (GET /api/public/v1/organizations)',
    );
    progress.onRetry({
      type: 'settled',
      baseUrl: 'https://api.example',
      method: 'GET',
      path: '/api/public/v1/organizations',
      answered: true,
    });
    expect(out.writes.at(-1)).toBe('\r\x1b[2K');
    expect(progress.retrySnapshot()).toBeUndefined();
    progress.finish();
  });

  it('when a file is under way and a request is retried, then the retry takes the line, and the file comes back once it settled', () => {
    let now = 0;
    const out = screen(true);
    const progress = new ProgressLine({ stream: out.stream, now: () => (now += 1000) });
    progress.onEvent({ type: 'unit', name: 'accounts.csv', expectedRecords: 3 });
    progress.onRetry({
      type: 'retrying',
      baseUrl: 'https://api.example',
      method: 'POST',
      path: '/api/public/v1/accounts',
      attempt: 1,
      maxAttempts: 8,
      code: 'TIMEOUT',
      delayMs: 3_000,
    });
    expect(out.lastLine()).toMatch(
      /^the API at https:\/\/api\.example is not answering \(TIMEOUT\): attempt 1 of 8/,
    );
    progress.onRetry({
      type: 'settled',
      baseUrl: 'https://api.example',
      method: 'POST',
      path: '/api/public/v1/accounts',
      answered: true,
    });
    expect(out.lastLine()).toBe('accounts.csv: 0 of ~3 rows read, 0 done, 0 failed');
    progress.finish();
  });

  it('when stderr is not a terminal, then nothing is drawn', () => {
    const out = screen(false);
    const progress = new ProgressLine({ stream: out.stream });
    progress.onEvent({ type: 'unit', name: 'accounts.csv' });
    progress.onEvent({ type: 'records', read: 3, rejected: 0 });
    progress.onRetry({
      type: 'retrying',
      baseUrl: 'https://api.example',
      method: 'GET',
      path: '/api/public/v1/organizations',
      attempt: 1,
      maxAttempts: 8,
      code: 'NETWORK_ERROR',
      delayMs: 3_000,
    });
    progress.finish();
    expect(out.writes).toEqual([]);
  });
});
