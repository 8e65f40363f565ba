import { describe, expect, it } from 'vitest';
import { WaiterLine } from '../../../bench/limiter-waiter-line.js';

class StoreDown extends Error {}

describe('WaiterLine', () => {
  it('when the head is admitted, then the callers behind it run one at a time, in arrival order', async () => {
    const line = new WaiterLine();
    const order: number[] = [];
    let release!: () => void;
    const head = line.turn('k', () => new Promise<void>((r) => (release = r)).then(() => order.push(0)));
    const rest = [1, 2, 3].map((i) => line.turn('k', async () => order.push(i)));
    expect(line.queued('k')).toBe(3);
    release();
    await Promise.all([head, ...rest]);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(line.totalQueued).toBe(0);
  });

  it('when the head fails with a failure every caller shares (the store is down), then the callers behind it fail with it without trying', async () => {
    const line = new WaiterLine((error) => error instanceof StoreDown);
    let tries = 0;
    let fail!: (error: unknown) => void;
    const head = line.turn('k', () => {
      tries++;
      return new Promise<void>((_, reject) => (fail = reject));
    });
    const rest = Array.from({ length: 7 }, () =>
      line.turn('k', async () => {
        tries++;
      }),
    );
    const down = new StoreDown('Redis did not answer');
    fail(down);
    const settled = await Promise.allSettled([head, ...rest]);
    expect(settled.map((s) => (s.status === 'rejected' ? s.reason : 'admitted'))).toEqual(
      Array(8).fill(down),
    );
    expect(tries).toBe(1);
    expect(line.totalQueued).toBe(0);
  });

  it('when the head fails with its own failure (its signal aborted), then the next caller still gets its turn', async () => {
    const line = new WaiterLine((error) => error instanceof StoreDown);
    const head = line.turn('k', async () => {
      throw new Error('aborted');
    });
    const next = line.turn('k', async () => 'admitted');
    await expect(head).rejects.toThrow('aborted');
    await expect(next).resolves.toBe('admitted');
  });
});
