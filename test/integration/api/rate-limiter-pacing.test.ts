import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { Flow } from '../../../src/api/rate-limit/flow.js';
import { CHECK_SLACK_MS } from '../../../src/api/rate-limit/policy.js';
import { LimiterProcesses } from '../../support/limiter-processes.js';
import { rateInfo } from '../../support/rate-info.js';

const PREFIX = `test-rl-pace-${randomUUID().slice(0, 8)}`;
const QUOTA = 20;
const WINDOW_MS = 2000;
/** The limiter's span: the window and its margin (250 ms). */
const SPAN_MS = WINDOW_MS + 250;
const SLICES = 4;
const SLICE_MS = Math.ceil(SPAN_MS / SLICES);
const BURST = Math.ceil(QUOTA / SLICES);

/** The most admissions found in any `span` ms of `times` (sorted). */
const maxIn = (times: number[], span: number) => {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= span) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
};

/**
 * Pacing of a saturated budget (PACE_SLICES, docs/rate-limiting.md): the slots a backlog used in a
 * burst are handed out again a slice at a time, so a source that starts waiting behind it is
 * admitted within about a slice instead of at the next burst of freed slots (up to a window).
 * On a virtual clock (`timeSource: 'clock'`, test/support/virtual-time.ts): the spans take no real time.
 */
describe('pacing of a saturated budget, through Redis', () => {
  const processes = new LimiterProcesses(PREFIX);
  const { time } = processes;
  /** A limiter on its own connection: a process of its own, as far as Redis can tell. */
  const process = (paceSlices?: number) => processes.start({ paceSlices });

  afterAll(() => processes.close());

  /** A backlog of `callers` requests of one flow for `ms`, then one small flow's request at `smallAt`. */
  async function run(paceSlices: number) {
    const limiter = process(paceSlices);
    const key = `k-${randomUUID().slice(0, 8)}`;
    await limiter.observe(key, rateInfo(QUOTA, WINDOW_MS / 1000));
    const started = time.t;
    const until = started + 3.2 * SPAN_MS;
    const admitted: number[] = [];
    const big: Flow = { id: 'backlog', weight: 1 };
    return time.run(
      (async () => {
        const callers = Array.from({ length: 12 }, async () => {
          while (time.t < until) {
            await limiter.acquire(key, undefined, big);
            admitted.push(time.t - started);
          }
        });
        // The small flow arrives in the third span, after the burst of freed slots of the second.
        await time.sleep(2 * SPAN_MS + SLICE_MS / 2);
        const asked = time.t;
        await limiter.acquire(key, undefined, { id: 'small', weight: 1 });
        const smallWaitMs = time.t - asked;
        await Promise.all(callers);
        admitted.sort((a, b) => a - b);
        return { admitted, smallWaitMs };
      })(),
    );
  }

  it('when a backlog keeps the budget saturated, then after its first burst at most q/P go in any slice, no window holds more than q, the budget stays used, and a newcomer waits about a slice', async () => {
    const { admitted, smallWaitMs } = await run(SLICES);
    expect(maxIn(admitted, SPAN_MS)).toBeLessThanOrEqual(QUOTA);
    // The first burst is the idle budget's own; once saturated, the slots go out a slice at a time.
    const saturated = admitted.filter((t) => t > SPAN_MS);
    // (On the virtual clock a caller resumes at the time it was admitted: no timers' jitter.)
    expect(maxIn(saturated, SLICE_MS)).toBeLessThanOrEqual(BURST);
    // Used: from the first burst on, as many as the limiter's span allows (the policy's window and
    // its margin, 11% of a 2 s window here; 0.4% of 60 s), less the checks' delays.
    const span = saturated[saturated.length - 1]! - saturated[0]!;
    const allowed = (QUOTA * span) / SPAN_MS;
    const used = saturated.length / allowed;
    console.info(
      `paced: ${saturated.length} in ${Math.round(span)} ms = ${used.toFixed(3)} of the span's quota; newcomer waited ${Math.round(smallWaitMs)} ms (slice ${SLICE_MS} ms)`,
    );
    expect(used).toBeGreaterThanOrEqual(0.93);
    // Within a slice and a check's slack.
    expect(smallWaitMs).toBeLessThanOrEqual(SLICE_MS + CHECK_SLACK_MS);
  }, 30_000);

  it('when pacing is off, then the freed slots come back in the burst they were used in (what pacing removes)', async () => {
    const { admitted } = await run(0);
    const saturated = admitted.filter((t) => t > SPAN_MS);
    expect(maxIn(admitted, SPAN_MS)).toBeLessThanOrEqual(QUOTA);
    expect(maxIn(saturated, SLICE_MS)).toBeGreaterThan(BURST);
  }, 30_000);

  it('when one token is saturated by a backlog, then a request of another token does not wait for it', async () => {
    const limiter = process();
    const [busy, other] = [`busy-${randomUUID().slice(0, 8)}`, `other-${randomUUID().slice(0, 8)}`];
    await limiter.observe(busy, rateInfo(QUOTA, WINDOW_MS / 1000));
    await limiter.observe(other, rateInfo(QUOTA, WINDOW_MS / 1000));
    const flow: Flow = { id: 'backlog', weight: 1 };
    for (let i = 0; i < QUOTA; i++) await limiter.acquire(busy, undefined, flow);
    const stop = new AbortController();
    const otherWaitMs = await time.run(
      (async () => {
        const waiting = Array.from({ length: 8 }, () =>
          limiter.acquire(busy, stop.signal, flow).catch(() => 0),
        );
        await time.sleep(100);
        const asked = time.t;
        await limiter.acquire(other, undefined, { id: 'elsewhere', weight: 1 });
        const waited = time.t - asked;
        stop.abort();
        await Promise.all(waiting);
        return waited;
      })(),
    );
    // The busy token's next slot is about 2 s away; the other token's budget is its own.
    expect(otherWaitMs).toBeLessThan(150);
  }, 30_000);
});
