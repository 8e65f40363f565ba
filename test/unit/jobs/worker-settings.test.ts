import { describe, expect, it } from 'vitest';
import { stalledCheckIntervalMs, workerSettingsOf } from '../../../src/jobs/worker-settings.js';

/**
 * The latest a job is resumed after its worker died, as BullMQ's stalled check works: a job is
 * moved back at the first check that finds its lock expired, if an earlier check after its last
 * renewal marked it; the shared `stalled-check` key can make a live worker skip one tick.
 */
function worstResumeMs(lockMs: number, intervalMs: number): number {
  return Math.max(3 * intervalMs, lockMs + intervalMs);
}

describe('the stalled check period', () => {
  it('when lock and stalled check are the defaults (30 s each), then a dead worker’s job is resumed within 60 s, not 90', () => {
    const interval = stalledCheckIntervalMs(30_000, 30_000);
    expect(interval).toBe(20_000);
    expect(worstResumeMs(30_000, interval)).toBe(60_000);
    expect(worstResumeMs(30_000, 30_000)).toBe(90_000); // checking every stalledCheckSeconds
  });

  it('when any lock and stalled check are set, then the bound is lock + stalled check', () => {
    for (const [lock, check] of [
      [2_000, 1_000],
      [60_000, 5_000],
      [5_000, 60_000],
      [1_000, 1_000],
    ] as const) {
      const interval = stalledCheckIntervalMs(lock, check);
      expect(interval).toBeLessThanOrEqual(check);
      expect(worstResumeMs(lock, interval)).toBeLessThanOrEqual(lock + check);
    }
  });

  it('when the worker settings are built from the config, then they use that period', () => {
    const settings = workerSettingsOf({
      queue: { redisUrl: 'redis://127.0.0.1:6379', lockSeconds: 30, stalledCheckSeconds: 30 } as never,
    });
    expect(settings?.lockMs).toBe(30_000);
    expect(settings?.stalledIntervalMs).toBe(20_000);
  });
});
