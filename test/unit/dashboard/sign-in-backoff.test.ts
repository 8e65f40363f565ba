import { describe, expect, it } from 'vitest';
import { SignInBackoff } from '../../../src/dashboard/sign-in-backoff.js';
import { ManualClock } from '../../../src/domain/clock.js';

/** One attempt played to its end as the dashboard plays it: wait its delay, then the outcome. */
function attempt(backoff: SignInBackoff, clock: ManualClock, address: string, ok: boolean, user = 'ops') {
  const admitted = backoff.begin(address, user);
  if (admitted.refused) return { refused: admitted.retryAfterSeconds };
  clock.advance(admitted.waitMs);
  admitted.end(ok);
  return { waited: admitted.waitMs };
}

describe('the sign-in back-off', () => {
  it('when one address keeps guessing, then after 5 free failures each guess waits longer, up to 2 s', () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock });
    const waits = Array.from({ length: 12 }, () => attempt(backoff, clock, '198.51.100.7', false));
    expect(waits.map((w) => w.waited)).toEqual([0, 0, 0, 0, 0, 250, 500, 1000, 2000, 2000, 2000, 2000]);
  });

  it('when the right password follows a flood of wrong ones, then it is let in after at most 2 s, and the address starts afresh', () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock });
    for (let i = 0; i < 20; i++) attempt(backoff, clock, '198.51.100.7', false);
    const right = attempt(backoff, clock, '198.51.100.7', true);
    expect(right.waited).toBeGreaterThan(0);
    expect(right.waited).toBeLessThanOrEqual(2000);
    // The address is forgotten; the user name keeps slowing guesses down (≤ 2 s) for a while.
    expect(backoff.begin('198.51.100.7', 'someone-else')).toMatchObject({ refused: false, waitMs: 0 });
  });

  it('when many guesses arrive at once from one address, then they queue up and those beyond 2 s are refused unchecked', () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock });
    const burst = Array.from({ length: 20 }, () => backoff.begin('198.51.100.7', 'ops'));
    const admitted = burst.filter((a) => !a.refused);
    expect(admitted.map((a) => a.waitMs)).toEqual([0, 0, 0, 0, 0, 250, 750, 1750]);
    expect(burst.filter((a) => a.refused)).toHaveLength(12);
    expect(burst.at(-1)).toEqual({ refused: true, retryAfterSeconds: 2 });
    for (const a of admitted) a.end(false);
    // Once those have had their turn, the next attempt (the right one, say) is let in within 2 s.
    clock.advance(1750);
    const next = backoff.begin('198.51.100.7', 'ops');
    expect(next.refused).toBe(false);
    expect(!next.refused && next.waitMs).toBeLessThanOrEqual(2000);
  });

  it("when one address floods, then another address is never refused, only slowed down for that user's sake", () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock });
    for (let i = 0; i < 30; i++) backoff.begin('198.51.100.7', 'ops');
    expect(backoff.begin('198.51.100.7', 'ops').refused).toBe(true);
    const other = backoff.begin('203.0.113.9', 'ops');
    expect(other).toMatchObject({ refused: false, waitMs: 0 });
    // After failures that ended, the user name is slowed down everywhere, never refused.
    for (let i = 0; i < 10; i++) attempt(backoff, clock, `192.0.2.${i}`, false);
    expect(backoff.begin('203.0.113.10', 'ops')).toMatchObject({ refused: false, waitMs: 2000 });
    expect(backoff.begin('203.0.113.10', 'other-user')).toMatchObject({ refused: false, waitMs: 0 });
  });

  it('when an address has been quiet for 15 minutes, then its failures are forgotten', () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock });
    for (let i = 0; i < 10; i++) attempt(backoff, clock, '198.51.100.7', false);
    clock.advance(15 * 60_000);
    expect(backoff.begin('198.51.100.7', 'ops')).toMatchObject({ refused: false, waitMs: 0 });
  });

  it('when clients invent addresses and user names by the thousand, then memory stays bounded', () => {
    const clock = new ManualClock();
    const backoff = new SignInBackoff({ clock, maxKeys: 100 });
    for (let i = 0; i < 1000; i++) attempt(backoff, clock, `10.0.${i >> 8}.${i & 255}`, false, `user-${i}`);
    expect(backoff.size).toBeLessThanOrEqual(200);
  });
});
