import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DashboardDeps } from '../../../src/dashboard/deps.js';
import { ManualClock } from '../../../src/domain/clock.js';
import { basic, CREDENTIALS, formPost, openTestState, testApp } from './dashboard-support.js';

type State = Awaited<ReturnType<typeof openTestState>>;

/** A clock and the back-off's waits on it: each wait moves the clock, so no test sleeps. */
function timeline(): { clock: ManualClock; waits: number[]; deps: Partial<DashboardDeps> } {
  const clock = new ManualClock('2026-01-15T10:00:00Z');
  const waits: number[] = [];
  const wait = async (ms: number) => {
    waits.push(ms);
    clock.advance(ms);
  };
  return { clock, waits, deps: { clock, wait } };
}

const ATTACKER = '198.51.100.7';
const COLLEAGUE = '203.0.113.20';

describe('dashboard sign-in back-off', () => {
  let state: State;
  beforeAll(async () => {
    state = await openTestState('dash_backoff');
  });
  afterAll(async () => {
    await state.close();
  });

  it('when wrong passwords flood in from one address, then each is slowed down, and the right one still gets in within 2 s', async () => {
    const { waits, deps } = timeline();
    const app = testApp(state, deps);
    for (let i = 0; i < 12; i++) {
      const res = await app.inject({
        url: '/api/status',
        remoteAddress: ATTACKER,
        headers: { authorization: basic('ops', `guess-${i}`) },
      });
      expect(res.statusCode).toBe(401);
    }
    expect(waits).toEqual([250, 500, 1000, 2000, 2000, 2000, 2000]);

    waits.length = 0;
    const right = await app.inject({
      url: '/api/status',
      remoteAddress: ATTACKER,
      headers: { authorization: basic() },
    });
    expect(right.statusCode).toBe(200);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(2000);

    // The sign-in form too (from this machine): after more wrong tries, the right one opens a session.
    for (let i = 0; i < 10; i++) {
      const wrong = await formPost(app, '/login', { user: 'ops', password: `guess-${i}`, next: '/' });
      expect(wrong.statusCode).toBe(401);
    }
    waits.length = 0;
    const form = await formPost(app, '/login', { ...CREDENTIALS, next: '/' });
    expect(form.statusCode).toBe(303);
    expect(String(form.headers['set-cookie'])).toMatch(/^rs_dashboard_session=/);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeLessThanOrEqual(2000);
  });

  it('when wrong passwords arrive in parallel from one address, then the ones beyond the queue are refused unchecked (429 with Retry-After)', async () => {
    const clock = new ManualClock('2026-01-15T10:00:00Z');
    // Waits that never move the clock: every attempt of the burst is admitted at the same instant.
    const app = testApp(state, { clock, wait: async () => {} });
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        app.inject({
          url: '/api/status',
          remoteAddress: ATTACKER,
          headers: { authorization: basic('ops', `guess-${i}`) },
        }),
      ),
    );
    const statuses = burst.map((res) => res.statusCode);
    expect(statuses.filter((s) => s === 401)).toHaveLength(8);
    expect(statuses.filter((s) => s === 429)).toHaveLength(12);
    const refused = burst.find((res) => res.statusCode === 429)!;
    expect(refused.json()).toMatchObject({ code: 'DASHBOARD_SIGN_IN_THROTTLED' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    // Once those have had their turn, the right password is let in.
    clock.advance(2000);
    const right = await app.inject({
      url: '/api/status',
      remoteAddress: ATTACKER,
      headers: { authorization: basic() },
    });
    expect(right.statusCode).toBe(200);
  });

  it("when one address has failed many times, then another address's sign-in is neither refused nor locked out", async () => {
    const clock = new ManualClock('2026-01-15T10:00:00Z');
    const waits: number[] = [];
    // The clock stands still: the attacker's queue is as full as it gets when the colleague comes.
    const app = testApp(state, { clock, wait: async (ms) => void waits.push(ms) });
    const asked = (address: string, password: string) =>
      app.inject({
        url: '/api/status',
        remoteAddress: address,
        headers: { authorization: basic('ops', password) },
      });
    await Promise.all(Array.from({ length: 30 }, (_, i) => asked(ATTACKER, `guess-${i}`)));
    expect((await asked(ATTACKER, 'guess-again')).statusCode).toBe(429);

    // A colleague mistypes: told "wrong", not "wait"; then signs in, delayed at most 2 s.
    waits.length = 0;
    expect((await asked(COLLEAGUE, 'typo')).statusCode).toBe(401);
    expect((await asked(COLLEAGUE, CREDENTIALS.password)).statusCode).toBe(200);
    expect(waits).toHaveLength(2);
    expect(Math.max(...waits)).toBeLessThanOrEqual(2000);
  });
});
