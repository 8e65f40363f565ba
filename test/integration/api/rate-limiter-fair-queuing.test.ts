import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { readBudgetUse } from '../../../src/api/rate-limit/budget-use.js';
import type { Flow } from '../../../src/api/rate-limit/flow.js';
import { TICKET_GRACE_MS } from '../../../src/api/rate-limit/policy.js';
import { LimiterProcesses } from '../../support/limiter-processes.js';
import { maxInAnySpan } from '../../support/limiter-worker.js';
import { rateInfo } from '../../support/rate-info.js';

const PREFIX = `test-rl-fair-${randomUUID().slice(0, 8)}`;

/** Jain's fairness index of `shares`: 1 when all are equal, 1/n when one flow gets everything. */
const jain = (shares: number[]) =>
  shares.reduce((a, b) => a + b, 0) ** 2 / (shares.length * shares.reduce((a, b) => a + b * b, 0));

/**
 * Each "process" is a limiter on its own connection, all on one virtual clock (`timeSource:
 * 'clock'`, test/support/virtual-time.ts), so the spans take no real time.
 */
describe('weighted fair queuing between flows, shared through Redis by several processes', () => {
  // Pacing off: these tests pin the fair queue's order and edges over the sliding log itself (its
  // pacing of a saturated budget is tested in rate-limiter-pacing.test.ts).
  const fleet = new LimiterProcesses(PREFIX, { paceSlices: 0 });
  const { time } = fleet;
  let key: string;
  /** A limiter on its own connection: a process of its own, as far as Redis can tell. */
  const process = () => fleet.start();

  afterAll(() => fleet.close());
  beforeEach(() => {
    key = `k-${randomUUID().slice(0, 8)}`;
  });

  /** The budget's use, read on the tests' clock. */
  const budgetUse = (budget: string) => readBudgetUse(fleet.redis, PREFIX, budget, { clock: time.clock });

  it('when 3 processes run flows of weights 1, 1 and 2 on q=20 w=2 s, then no window holds more than 20, the shares follow the weights, and a late small flow goes at the next freed slots', async () => {
    const processes = [process(), process(), process()];
    await processes[0]!.observe(key, rateInfo(20, 2));
    const started = time.t;
    const until = started + 9_600; // the first batch, then 4 more (every w + margin + the answer)
    const stop = time.timeout(until - started);
    const admissions: { flow: string; at: number }[] = [];
    /** `callers` of `flow` in each process, each sending again as soon as its answer is observed. */
    const busy = (flow: Flow, callers: number) =>
      processes.flatMap((limiter) =>
        Array.from({ length: callers }, async () => {
          while (time.t < until) {
            try {
              await limiter.acquire(key, stop, flow);
            } catch {
              return;
            }
            admissions.push({ flow: flow.id, at: time.t });
            await time.sleep(5); // the request
            await limiter.observe(key, rateInfo(20, 2, { remaining: undefined }));
          }
        }),
      );
    const { small, ranks, arrivedAt } = await time.run(
      (async () => {
        // 48 callers for 20 slots per span: each flow has more waiting than its share of a batch.
        const running = [
          ...busy({ id: 'a', weight: 1 }, 4),
          ...busy({ id: 'b', weight: 1 }, 4),
          ...busy({ id: 'c', weight: 2 }, 8),
        ];
        // Mid-span, 5.5 s in: two requests of a flow that was idle, from one process.
        await time.sleep(5_500);
        const arrivedAt = time.t;
        const smallDone = Promise.all(
          [1, 2].map(() =>
            processes[1]!.acquire(key, undefined, { id: 'small', weight: 1 }).then(() => {
              admissions.push({ flow: 'small', at: time.t });
              return time.t;
            }),
          ),
        );
        // The waiting order in Redis once both are queued: how many requests of others are ahead.
        await time.settle();
        const queued = await fleet.redis.zrange(processes[0]!.keysOf(key).fq, '0', '-1');
        const ranks = queued.flatMap((ticket, rank) => (ticket.startsWith('small|') ? [rank] : []));
        const small = await smallDone;
        await Promise.all(running);
        return { small, ranks, arrivedAt };
      })(),
    );

    expect(ranks).toHaveLength(2);
    const times = admissions.map((a) => a.at);
    expect(maxInAnySpan(times, 2_000)).toBeLessThanOrEqual(20);
    // Shares over the busy period: after the first batch (taken by arrival order) until the stop.
    const count = (flow: string) =>
      admissions.filter((a) => a.flow === flow && a.at > started + 1_000 && a.at < until).length;
    const [a, b, c] = [count('a'), count('b'), count('c')];
    expect(a + b + c).toBeGreaterThanOrEqual(70);
    expect(jain([a, b])).toBeGreaterThanOrEqual(0.95);
    expect(jain([a, b, c / 2])).toBeGreaterThanOrEqual(0.95);
    // The small flow's two requests queued with about one request of each other flow ahead of each
    // of its own (a and b: 1 each, c of weight 2: 2), not behind the 48 waiting, and went with the
    // next batch of freed slots (at most one span, 2.25 s, later).
    const ahead = Math.max(0, ...ranks) - 1;
    expect(ahead).toBeLessThanOrEqual(10);
    const waited = Math.max(...small) - arrivedAt;
    expect(waited).toBeLessThan(2_250 + 500);
    console.info(
      `fair queuing, 3 processes: admissions a=${a} b=${b} c=${c} (Jain a,b ${jain([a, b]).toFixed(3)}; a,b,c/2 ${jain([a, b, c / 2]).toFixed(3)}); small flow waited ${waited} ms, queued with ${ahead} requests of others ahead (ranks ${ranks}); checks per admission (the last waiters' arrival checks included) ${(
        processes.reduce((sum, p) => sum + (p.stats().checks ?? 0), 0) / admissions.length
      ).toFixed(2)}`,
    );
  });

  it('when the process holding the first tickets is killed while they wait, then they lapse a few seconds after their edge and the next waiter is admitted', async () => {
    const [filler, next, killed] = [process(), process(), process()];
    await filler.observe(key, rateInfo(2, 2));
    await time.run(Promise.all([filler.acquire(key), filler.acquire(key)]));
    const filledAt = time.t; // the two slots free at 2.25 s
    const redis = fleet.redis;
    const keys = next.keysOf(key);
    const admittedAfter = await time.run(
      (async () => {
        // Two requests of a process that is killed once they wait: its connection is gone, so its
        // tickets stay in Redis and nobody checks them again, as when the process dies.
        const lost = [killed.acquire(key), killed.acquire(key)].map((p) => p.catch((error: Error) => error));
        await time.settle();
        expect(await redis.zcard(keys.fq)).toBe(2);
        fleet.connectionOf(killed).disconnect();
        expect((await budgetUse(key)).waiting).toEqual([{ flow: '', requests: 2 }]);

        // Its two tickets (of the same flow, so ahead of this one) hold both slots until they lapse:
        // 2.25 s + the grace. (A request of another flow would tie with the first and go before it.)
        await next.acquire(key, time.timeout(10_000));
        const admittedAfter = time.t - filledAt;
        expect(await Promise.all(lost)).toEqual([
          expect.objectContaining({ code: 'REDIS_UNAVAILABLE' }),
          expect.objectContaining({ code: 'REDIS_UNAVAILABLE' }),
        ]);
        return admittedAfter;
      })(),
    );
    expect(admittedAfter).toBeGreaterThanOrEqual(2_250 + TICKET_GRACE_MS - 300);
    expect(admittedAfter).toBeLessThan(2_250 + TICKET_GRACE_MS + 1_500);
    expect(await redis.zcard(keys.fq)).toBe(0);
    expect((await budgetUse(key)).waiting).toEqual([]);
  });

  it('when requests of two flows wait in two processes, then readBudgetUse tells the window, the policy and the waiting per flow, and an aborted request leaves the count', async () => {
    const [one, two] = [process(), process()];
    await one.observe(key, rateInfo(3, 60));
    await time.run(Promise.all([one.acquire(key), one.acquire(key), two.acquire(key)]));
    const leave = new AbortController();
    const big = { id: 'erp-csv', weight: 1 };
    const redis = fleet.redis;
    await time.run(
      (async () => {
        const pending = [
          ...[1, 2, 3].map(() => one.acquire(key, undefined, big)),
          two.acquire(key, leave.signal, big),
          two.acquire(key, undefined, { id: 'crm|eu', weight: 2 }),
        ].map((p) =>
          p.then(
            () => 'admitted',
            (error: Error) => error.message,
          ),
        );
        await time.settle();
        expect(await redis.zcard(one.keysOf(key).fq)).toBe(5);
        expect(await budgetUse(key)).toEqual({
          requestsInWindow: 3,
          quota: 3,
          windowSeconds: 60,
          waiting: [
            { flow: 'erp-csv', requests: 4 },
            { flow: 'crm|eu', requests: 1 },
          ],
        });
        leave.abort(new Error('pass cancelled'));
        await time.settle();
        expect((await budgetUse(key)).waiting).toEqual([
          { flow: 'erp-csv', requests: 3 },
          { flow: 'crm|eu', requests: 1 },
        ]);
        await Promise.all([one.close(), two.close()]);
        expect(await Promise.all(pending)).toEqual([
          ...Array(3).fill('The rate limiter is closed'),
          'pass cancelled',
          'The rate limiter is closed',
        ]);
        await time.settle();
      })(),
    );
    expect(await redis.zcard(one.keysOf(key).fq)).toBe(0);
    // Every key of the budget expires on its own (PTTL -1: a key without a TTL).
    const ttls = await Promise.all(Object.values(one.keysOf(key)).map((name) => redis.pttl(name)));
    expect(ttls.filter((ttl) => ttl === -1)).toEqual([]);
    // Nothing is written by reading: no key of an unused budget appears.
    expect(await budgetUse('never-used')).toEqual({
      requestsInWindow: 0,
      quota: undefined,
      windowSeconds: undefined,
      waiting: [],
    });
    expect(await redis.keys(`${PREFIX}:rl:never-used:*`)).toEqual([]);
  });

  it("when the limiter's Redis stops answering, then every waiter of the process fails at once with REDIS_UNAVAILABLE", async () => {
    const limiter = process();
    const redis = fleet.connectionOf(limiter);
    await limiter.observe(key, rateInfo(2, 1));
    await time.run(Promise.all([limiter.acquire(key), limiter.acquire(key)]));
    // 8 waiters; the first two check again at 1.25 s, the others 1.27 s and 2.54 s later.
    const { settled, failedAfter, checksBefore } = await time.run(
      (async () => {
        const waiting = Array.from({ length: 8 }, () => limiter.acquire(key));
        await time.settle();
        expect(await fleet.redis.zcard(limiter.keysOf(key).fq)).toBe(8);
        const checksBefore = limiter.stats().checks ?? 0;
        redis.disconnect();
        const started = time.t;
        const settled = await Promise.allSettled(waiting);
        return { settled, failedAfter: time.t - started, checksBefore };
      })(),
    );
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason.code : 'admitted'))).toEqual(
      Array(8).fill('REDIS_UNAVAILABLE'),
    );
    expect(failedAfter).toBeLessThan(1_800);
    expect((limiter.stats().checks ?? 0) - checksBefore).toBeLessThanOrEqual(2);
  });
});
