import { describe, expect, it } from 'vitest';
import { currentFlow, FinishTags, type Flow, withFlow } from '../../../src/api/rate-limit/flow.js';
import { SlidingLogRateLimiter } from '../../../src/api/rate-limit/sliding-log.js';
import { rateInfo } from '../../support/rate-info.js';
import { VirtualTime } from '../../support/virtual-time.js';

const KEY = 'budget-1';

/** q = 10 per 1 s, margin 250 ms: a slot is reused every 1.25 s. */
async function setup(quota = 10) {
  const time = new VirtualTime();
  const limiter = new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep, marginMs: 250 });
  await limiter.observe(KEY, rateInfo(quota, 1));
  /** Admissions in order: which flow, and when (ms since start). */
  const admitted: { flow: string; t: number }[] = [];
  /** `workers` callers of `flow`, each acquiring again as soon as it was admitted, until `untilMs`. */
  const busy = async (flow: Flow, workers: number, untilMs: number) => {
    const worker = async () => {
      while (time.t < untilMs) {
        await limiter.acquire(KEY, undefined, flow);
        admitted.push({ flow: flow.id, t: time.t });
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
  };
  /**
   * Admissions of `flow` while every flow was busy: after the first batch (taken by whoever came
   * first, before the others arrived) and until the callers stop (the last ones waiting then are
   * of whichever flow stopped last).
   */
  const count = (flow: string, untilMs = 25_000) =>
    admitted.filter((a) => a.flow === flow && a.t > 0 && a.t <= untilMs).length;
  return { time, limiter, admitted, busy, count };
}

describe('weighted fair queuing between flows (in memory)', () => {
  // "Busy": a flow has more callers waiting than its share of a batch of freed slots (a flow with
  // fewer takes all it asks for, and the others share the rest: no slot is left idle).
  it('when two busy flows of equal weight share a budget, then they get equal admissions, though one has 20 callers and the other 6', async () => {
    const { time, busy, count } = await setup();
    // 20 spans of 10 slots; a first-come limiter would give "a" 20/26 of them.
    await time.run(
      Promise.all([busy({ id: 'a', weight: 1 }, 20, 25_000), busy({ id: 'b', weight: 1 }, 6, 25_000)]),
    );
    expect(count('a') + count('b')).toBe(200);
    expect(count('a')).toBe(count('b'));
  });

  it('when flows of weights 2 and 1 are busy, then the first gets twice the admissions of the second', async () => {
    const { time, busy, count } = await setup();
    await time.run(
      Promise.all([
        busy({ id: 'heavy', weight: 2 }, 12, 25_000),
        busy({ id: 'light', weight: 1 }, 12, 25_000),
      ]),
    );
    expect(count('heavy') / count('light')).toBeGreaterThan(1.9);
    expect(count('heavy') / count('light')).toBeLessThan(2.1);
  });

  it('when a small flow arrives behind a backlog of 300 requests, then its first request takes the next freed slot', async () => {
    const { time, limiter, admitted } = await setup(5);
    const backlog = Array.from({ length: 300 }, () =>
      limiter
        .acquire(KEY, undefined, { id: 'backlog', weight: 1 })
        .then(() => admitted.push({ flow: 'backlog', t: time.t })),
    );
    // Three spans later (15 of the backlog admitted), one request of another flow, through `withFlow`.
    const small = (async () => {
      await time.sleep(3_000);
      const arrivedAt = time.t;
      const before = admitted.length;
      await withFlow({ id: 'small', weight: 1 }, () => limiter.acquire(KEY));
      return { arrivedAt, admittedAt: time.t, backlogAhead: admitted.length - before };
    })();
    const run = time.run(Promise.all([small, ...backlog.slice(0, 40)]));
    const { arrivedAt, admittedAt, backlogAhead } = (await run)[0];
    expect(arrivedAt).toBe(3_000);
    // The slots free at 3.75 s (a batch of 5): one goes to the backlog's earlier tag, the next to it.
    expect(admittedAt).toBe(3_750);
    expect(backlogAhead).toBeLessThanOrEqual(1);
    await limiter.close();
    await Promise.allSettled(backlog);
  });

  it('when a flow sends a request after being idle, then it starts at the virtual time, not behind its past use', () => {
    const tags = new FinishTags();
    const a = { id: 'a', weight: 1 };
    const b = { id: 'b', weight: 1 };
    for (let i = 0; i < 50; i++) tags.admitted(tags.issue(a)); // "a" alone: V = 50
    expect(tags.issue(b)).toBe(51);
    expect(tags.issue(a)).toBe(51);
    expect(tags.issue({ id: 'c', weight: 4 })).toBe(50.25);
  });

  it('when no flow is given, then requests belong to the current withFlow, else to the implicit flow; a weight of 0 is refused', async () => {
    expect(currentFlow()).toBeUndefined();
    await withFlow({ id: 'erp', weight: 2 }, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      expect(currentFlow()).toEqual({ id: 'erp', weight: 2 });
    });
    expect(() => withFlow({ id: 'x', weight: 0 }, async () => undefined)).toThrow(
      expect.objectContaining({ code: 'FLOW_WEIGHT_INVALID' }),
    );
  });
});
