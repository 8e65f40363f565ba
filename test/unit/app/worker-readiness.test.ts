import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../../../src/alerts/events.js';
import { type Schedule, TRYING_GRACE_MS, WorkerReadiness } from '../../../src/app/worker-readiness.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { AppError } from '../../../src/domain/errors.js';
import { createLogger } from '../../../src/logging/logger.js';

/** A logger writing into memory: `entries()` are its lines, parsed. */
function captureLogs() {
  const lines: string[] = [];
  const log = createLogger({ level: 'debug', destination: { write: (line: string) => lines.push(line) } });
  return { log, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

/** A schedule the test runs by hand: what is due after the clock moved. */
function manualSchedule(clock: ManualClock) {
  let due: Array<{ at: number; fn: () => void }> = [];
  const schedule: Schedule = (fn, ms) => {
    const entry = { at: clock.now().getTime() + ms, fn };
    due.push(entry);
    return () => {
      due = due.filter((e) => e !== entry);
    };
  };
  const advance = (ms: number) => {
    clock.advance(ms);
    const now = clock.now().getTime();
    const ripe = due.filter((e) => e.at <= now);
    due = due.filter((e) => e.at > now);
    for (const e of ripe) e.fn();
  };
  return { schedule, advance };
}

function readinessOf(options: { notReadyMs?: number; repeatMs?: number } = {}) {
  const clock = new ManualClock('2026-11-25T08:00:00.000Z');
  const { schedule, advance } = manualSchedule(clock);
  const told: AlertEvent[] = [];
  const logs = captureLogs();
  const readiness = new WorkerReadiness({
    logger: logs.log,
    alerts: { notify: (event) => told.push(event) },
    notReadyMs: options.notReadyMs ?? 300_000,
    repeatMs: options.repeatMs ?? 3_600_000,
    clock,
    schedule,
  });
  const checks = async () =>
    Object.fromEntries(
      await Promise.all(
        (['redis', 'database', 'api'] as const).map(async (d) => {
          try {
            return [d, (await readiness.check(d).check()) ?? 'ok'];
          } catch (error) {
            return [d, `failed: ${(error as Error).message}`];
          }
        }),
      ),
    );
  return { readiness, told, logs, advance, checks };
}

const refused = new AppError('REDIS_UNAVAILABLE', 'cannot reach Redis at redis://redis:6379/: ECONNREFUSED');

describe("the worker's readiness", () => {
  it('when a dependency is missing, then its check fails with why, the others wait, and the outage is logged once', async () => {
    const { readiness, logs, checks } = readinessOf();
    readiness.trying('redis');
    readiness.trying('database');
    expect(await checks()).toEqual({ redis: 'pending', database: 'pending', api: 'pending' });
    readiness.missing('redis', refused, 2000);
    readiness.missing('redis', refused, 2000);
    readiness.answered('database');
    expect(await checks()).toEqual({
      redis: 'failed: redis: cannot reach Redis at redis://redis:6379/: ECONNREFUSED',
      database: 'ok',
      api: 'pending',
    });
    const waiting = logs.entries().filter((e) => e.event === 'worker.waiting');
    expect(waiting.map((e) => [e.level, e.dependency])).toEqual([
      [40, 'redis'],
      [20, 'redis'],
    ]);
    expect(readiness.ready).toBe(false);
  });

  it('when a first attempt has had no answer for a while, then its check fails: nothing answered is not ready', async () => {
    const { readiness, advance, checks } = readinessOf();
    readiness.trying('api');
    advance(TRYING_GRACE_MS);
    expect((await checks()).api).toBe('failed: api: no answer yet (still trying)');
  });

  it('when every dependency answered, then it is ready, says so once with the time it took, and no alert comes', async () => {
    const { readiness, told, logs, advance } = readinessOf({ notReadyMs: 60_000 });
    readiness.missing('database', new Error('connect ECONNREFUSED 127.0.0.1:5432'));
    advance(4000);
    for (const d of ['redis', 'database', 'api'] as const) readiness.answered(d);
    readiness.answered('api');
    expect(readiness.ready).toBe(true);
    expect(logs.entries().filter((e) => e.event === 'worker.ready')).toEqual([
      expect.objectContaining({ readyMs: 4000 }),
    ]);
    expect(logs.entries().find((e) => e.event === 'worker.dependency-back')).toMatchObject({
      dependency: 'database',
      waitedMs: 4000,
    });
    advance(120_000);
    expect(told).toEqual([]);
  });

  it('when the wait lasts notReadyMinutes, then run.failed (no source) names what is missing and why, again every repeatMinutes while it lasts', () => {
    const { readiness, told, advance } = readinessOf({ notReadyMs: 300_000, repeatMs: 3_600_000 });
    readiness.answered('redis');
    readiness.answered('database');
    readiness.missing('api', new Error('GET /organizations: connect ECONNREFUSED'));
    advance(299_000);
    expect(told).toEqual([]);
    advance(1000);
    expect(told.map((e) => [e.type, e.sourceId, e.details.errorCode])).toEqual([
      ['run.failed', null, 'WORKER_NOT_READY'],
    ]);
    expect(told[0]!.summary).toBe(
      'the sync could not start: (WORKER_NOT_READY) the worker has waited 5 min for api (GET /organizations: connect ECONNREFUSED); it retries by itself',
    );
    advance(3_600_000);
    expect(told).toHaveLength(2);
    readiness.answered('api');
    advance(3_600_000);
    expect(told).toHaveLength(2);
  });

  it('when notReadyMinutes is 0, then nothing is told however long it waits', () => {
    const { told, advance } = readinessOf({ notReadyMs: 0 });
    advance(86_400_000);
    expect(told).toEqual([]);
  });
});
