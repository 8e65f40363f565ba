import { afterEach, describe, expect, it } from 'vitest';
import { SlidingLogRateLimiter } from '../../../src/api/rate-limit/sliding-log.js';
import {
  countSandboxRequests,
  maxInAnySpan,
  sendRequests,
  type WorkerArgs,
  type WorkerTime,
} from '../../support/limiter-worker.js';
import { startTestSandbox, type TestSandbox } from '../../support/sandbox.js';
import { VirtualTime } from '../../support/virtual-time.js';

const QUOTA = 20;
const WINDOW_SECONDS = 3;

/**
 * A process with the in-memory limiter (no Redis) stops after using most of the sandbox's strict
 * window; a new process (its restart) starts at once, knowing nothing, while the sandbox still
 * counts the first one's requests. Real HTTP; each process is a fresh in-memory limiter (a restart
 * keeps none of its state) run here, on the sandbox's virtual clock (test/support/virtual-time.ts),
 * so the windows take no real time.
 */
describe('in-memory rate limiter: a process restarting inside the server window', () => {
  let sandbox: TestSandbox | undefined;

  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  /** Runs the first process to its end, then its restart; returns what the sandbox and the restart saw. */
  async function restartInsideWindow(restart: Partial<WorkerArgs>) {
    const time = new VirtualTime();
    const workerTime: WorkerTime = {
      now: () => time.clock.now().getTime(),
      sleep: time.sleep,
      timeout: (ms) => time.timeout(ms),
      fetch: time.fetch(),
    };
    /** One run of a process that starts knowing nothing: a fresh in-memory limiter. */
    const processRun = (args: WorkerArgs) =>
      time.run(
        sendRequests(args, new SlidingLogRateLimiter({ clock: time.clock, sleep: time.sleep }), workerTime),
      );
    sandbox = await startTestSandbox({
      rateLimit: { quota: QUOTA, windowSeconds: WINDOW_SECONDS },
      clock: time.clock,
    });
    const server = countSandboxRequests(sandbox.deps);
    const base: WorkerArgs = {
      store: 'memory',
      redisUrl: '',
      prefix: '',
      key: 'budget-restart',
      baseUrl: sandbox.baseUrl,
      token: sandbox.accessToken,
      concurrency: 8,
      durationMs: 4_000,
    };
    // The restart goes the moment the first one ends.
    const before = { requests: await processRun({ ...base, maxRequests: 14 }) };
    const after = { requests: await processRun({ ...base, ...restart }) };
    // The point: the restart sends while the server still counts the first one's requests.
    const firstSent = Math.min(...before.requests.map((r) => r.sentAt));
    expect(Math.min(...after.requests.map((r) => r.sentAt)) - firstSent).toBeLessThan(WINDOW_SECONDS * 1000);
    return { server, before, after };
  }

  it('when the restart first meets a 200 carrying RateLimit, then it sizes its first burst from r and gets no 429', async () => {
    const { server, before, after } = await restartInsideWindow({});
    expect(before.requests.map((r) => r.status)).toEqual(Array(14).fill(200));
    expect(after.requests.filter((r) => r.status === 429)).toHaveLength(0);
    expect(server.refused()).toBe(0);
    expect(maxInAnySpan(server.counted, WINDOW_SECONDS * 1000)).toBeLessThanOrEqual(QUOTA);
    // The 6 left in the first window went, then the next window's.
    expect(after.requests.length).toBeGreaterThanOrEqual(QUOTA);
  });

  it('when the restart first meets a 401 (its stored token is gone: RateLimit-Policy but no count), then it still sends one request at a time until a count arrives and gets no 429', async () => {
    const { server, after } = await restartInsideWindow({ firstToken: 'revoked-token-of-the-old-process' });
    const statuses = after.requests.map((r) => r.status);
    expect(statuses[0]).toBe(401);
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    expect(server.refused()).toBe(0);
    expect(maxInAnySpan(server.counted, WINDOW_SECONDS * 1000)).toBeLessThanOrEqual(QUOTA);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(QUOTA);
    // Its requests went one at a time until the first 200 told r: none overlapped the first two.
    const [unauthorized, probe, ...rest] = [...after.requests].sort((x, y) => x.sentAt - y.sentAt);
    expect(probe!.sentAt).toBeGreaterThanOrEqual(unauthorized!.doneAt);
    expect(rest.every((r) => r.sentAt >= probe!.doneAt)).toBe(true);
  });
});
